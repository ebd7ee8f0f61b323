"""Inkwell core: every stage of the pipeline, with no UI code.

parse → chunk → enrich (keywords) → embed → store → retrieve → answer.
"""

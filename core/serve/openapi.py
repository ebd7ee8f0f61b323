"""The HTTP API's OpenAPI 3.1 description, served at /api/openapi.json (for API clients and their
generators). Written by hand: the routes are three, and Starlette has no schema generation of its own."""

from __future__ import annotations

_POST_REF = {
    "type": "object",
    "properties": {
        "post_id": {"type": "string"},
        "title": {"type": "string"},
        "url": {"type": ["string", "null"], "description": "The post's address on the blog, when known."},
    },
    "required": ["post_id", "title", "url"],
}
_ERROR = {
    "description": "An error, in plain words: the refusal of a reader's question (empty, too long, too many a "
    "minute) in the question's language, else the blog's. Tell errors apart by `status`.",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {"error": {"type": "string"}, "status": {"type": "integer"}},
                "required": ["error", "status"],
            }
        }
    },
}
_ANSWER = {
    "type": "object",
    "properties": {
        "question": {"type": "string"},
        "searched_for": {"type": ["string", "null"], "description": "What was searched, when it differs."},
        "mode": {"enum": ["extractive", "generative", "none"], "description": "none: not answered."},
        "answer": {"type": "string", "description": "Markdown."},
        "answer_text": {
            "type": "string",
            "description": "The answer in plain text (titles as written, no Markdown): what a widget shows.",
        },
        "declined": {"type": "boolean", "description": "Nothing the author wrote answers the question."},
        "lang": {
            "type": ["string", "null"],
            "description": "The answer's language (ISO 639-1; null: cannot be told), for a lang attribute.",
        },
        "sentences": {
            "type": "array",
            "description": "The author's quoted sentences (extractive answers), verbatim.",
            "items": {
                "allOf": [_POST_REF],
                "properties": {
                    "text": {"type": "string"},
                    "link": {
                        "type": ["string", "null"],
                        "description": "A link to the sentence on the post.",
                    },
                },
            },
        },
        "passages": {
            "type": "array",
            "description": "The quoted passage of each post, in plain text.",
            "items": {"allOf": [_POST_REF], "properties": {"text": {"type": "string"}}},
        },
        "sources": {"type": "array", "items": _POST_REF},
        "suggestions": {
            "type": "array",
            "items": _POST_REF,
            "description": "The closest posts, when declined.",
        },
        "note": {"type": ["string", "null"]},
        "collections": {"type": "array", "items": {"type": "string"}},
        "language": {"type": "string", "description": "The language of `labels` (ISO 639-1)."},
        "labels": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": 'A widget\'s fixed words in the reader\'s language ("searched_for", "sources", ...).',
        },
        "question_id": {"type": ["string", "null"], "description": "For /api/feedback; null: not kept."},
        "seconds": {"type": "number"},
    },
}
_ERRORS = {str(code): _ERROR for code in (400, 403, 413, 429, 503)}

OPENAPI = {
    "openapi": "3.1.0",
    "info": {"title": "Inkwell", "version": "1", "description": "Ask the author's writings."},
    "paths": {
        "/api/ask": {
            "post": {
                "summary": "Answer a question from the posts",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["question"],
                                "properties": {
                                    "question": {"type": "string"},
                                    "conversation": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {
                                                "role": {"enum": ["user", "assistant"]},
                                                "content": {"type": "string"},
                                            },
                                        },
                                    },
                                    "collection": {"type": ["string", "array"]},
                                    "mode": {"enum": ["auto", "extractive", "generative"]},
                                    "client": {
                                        "enum": ["widget"],
                                        "description": "The blog widget says so: its questions are logged as "
                                        "from the widget, others as from the API.",
                                    },
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "200": {
                        "description": "The answer; with `Accept: text/event-stream`, events `meta`, `delta` "
                        "({text, plain}: Markdown and plain text), then `done` (this object) or `error` ({error, status}).",
                        "content": {"application/json": {"schema": _ANSWER}, "text/event-stream": {}},
                    },
                    **_ERRORS,
                },
            }
        },
        "/api/feedback": {
            "post": {
                "summary": "A reader's rating of an answer (by the answer's question_id)",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["question_id", "up"],
                                "properties": {
                                    "question_id": {"type": "string"},
                                    "up": {"type": "boolean"},
                                    "comment": {"type": "string", "maxLength": 500},
                                },
                            }
                        }
                    },
                },
                "responses": {"200": {"description": "{ok: true}"}, "404": _ERROR, **_ERRORS},
            }
        },
        "/api/search": {
            "get": {
                "summary": "The excerpts retrieved for a question",
                "parameters": [
                    {"name": "q", "in": "query", "required": True, "schema": {"type": "string"}},
                    {"name": "k", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 50}},
                ],
                "responses": {"200": {"description": "{question, hits: [...]}"}, **_ERRORS},
            }
        },
        "/api/welcome": {
            "get": {
                "summary": "The chat's title, greeting and starter questions (the owner's settings), and "
                "whether questions are kept",
                "responses": {
                    "200": {
                        "description": "{author_name, title, greeting, starters: [...], question_log: bool, "
                        'privacy_note: the note to show while questions are kept ("" when not), language, '
                        "labels: the widget's fixed words in the blog's language}"
                    }
                },
            }
        },
        "/api/health": {
            "get": {
                "summary": "Whether readers can be answered",
                "responses": {
                    "200": {"description": '{"status": "ok", "posts", "chunks"}'},
                    "503": {
                        "description": '{"status": "unavailable", "problem": "data" | "no_posts" | "no_chunks"'
                        ' | "model", "error": what is wrong}'
                    },
                },
            }
        },
    },
}

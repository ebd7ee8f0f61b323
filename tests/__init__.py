"""Inkwell's tests: unit/ (pure functions), integration/ (real tables, models, CLI, AppTest, loopback
servers), e2e/ (`streamlit run` and headless Chromium); the support modules here serve all three."""

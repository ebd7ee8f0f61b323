"""End to end: a real `streamlit run` on loopback, driven over HTTP or in Debian's headless Chromium."""

"""Real parts together: LanceDB tables in tmp dirs, the bundled embedder, the CLI, AppTest, loopback servers."""

"""Post addresses: read from every format, built from the site's permalink pattern, stored in the posts
table (older tables upgrade in place), listed by the CLI, edited by the owner, undone. Real files, real
LanceDB in temp dirs, the real CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from core.cli import main
from core.config import ConfigError, Settings, permalink_pattern
from core.ingest import ingest_posts
from core.ingest.rebuild import rebuild_post
from core.parse import parse_bytes, parse_paths, parse_text
from core.parse.addresses import checked_url, permalink_url
from core.search import search
from core.store import Store
from core.store.schema import POSTS
from tests.conftest import DEMO, write

HOSTILE = [
    "javascript:alert(1)",
    "data:text/html,<script>x</script>",
    "//evil.example/x",
    "desk.html",
    "ftp://x",
]


def parsed(name: str, text: str):
    return parse_bytes(name, text.encode("utf-8"), time_limit=None)


# Parsing ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["url", "permalink", "canonical_url", "link"])
def test_front_matter_gives_the_address(key):
    result = parsed(
        "desk.md", f"---\ntitle: Desk\n{key}: https://blog.example/desk/\n---\nThe desk is cherry.\n"
    )
    assert [p.url for p in result.posts] == ["https://blog.example/desk/"] and not result.warnings


def test_html_canonical_link_wins_over_og_url_and_a_json_post_keeps_its_url():
    page = (
        "<html><head><title>Walk</title><meta property='og:url' content='https://blog.example/og/'>"
        "<link rel='canonical' href='https://blog.example/walk/'></head><body><p>I walk at dawn.</p></body></html>"
    )
    assert parsed("walk.html", page).posts[0].url == "https://blog.example/walk/"
    og_only = page.replace("<link rel='canonical' href='https://blog.example/walk/'>", "")
    assert parsed("walk.html", og_only).posts[0].url == "https://blog.example/og/"
    posts = parsed(
        "p.json", json.dumps([{"title": "J", "text": "Jam.", "url": "https://b.example/j/"}])
    ).posts
    assert posts[0].url == "https://b.example/j/"


def test_a_bundle_posts_url_line_is_its_address_and_not_its_text():
    text = (
        "=== POST START: Tea ===\nURL: https://blog.example/tea/\nGreen tea at 80 degrees.\n=== POST END ===\n"
        "=== POST START: Coffee ===\nCoffee is for mornings.\n=== POST END ===\n"
    )
    for name in ("notes.txt", "notes.md"):
        tea, coffee = parsed(name, text).posts
        assert (tea.url, coffee.url) == ("https://blog.example/tea/", "")
        assert "URL" not in tea.text and tea.text == "Green tea at 80 degrees."


@pytest.mark.parametrize("bad", HOSTILE)
def test_an_unusable_address_is_a_warning_never_a_crash(bad):
    result = parsed("a.md", f"---\ntitle: A\nurl: {json.dumps(bad)}\n---\nBody text.\n")
    assert [p.url for p in result.posts] == [""] and not result.errors
    assert len(result.warnings) == 1 and "ignored" in result.warnings[0].message
    page = f"<html><head><link rel=canonical href='{bad}'></head><body><p>Body text.</p></body></html>"
    result = parsed("a.html", page)
    assert result.posts[0].url == "" and result.warnings
    with pytest.raises(ValueError, match="address"):
        parse_text("Body text.", "A", url=bad, time_limit=None)


def test_odd_values_are_refused_and_good_ones_kept():
    assert checked_url("https://blog.example/a b")[0] == ""  # a space
    assert checked_url(["https://x.example"])[0] == ""
    assert checked_url("/2021/04/desk/") == ("/2021/04/desk/", "")
    assert checked_url("HTTPS://Blog.Example/x") == ("HTTPS://Blog.Example/x", "")


# Permalink patterns ----------------------------------------------------------------------------------


def test_permalink_patterns_of_jekyll_hugo_and_wordpress_build_the_same_address():
    for pattern in ("/{year}/{month}/{slug}/", "/:year/:month/:title/", "/%year%/%monthnum%/%postname%/"):
        url = permalink_url(
            "https://blog.example/", pattern, post_id="2021-04-18-cherry-desk", date="2021-04-18"
        )
        assert url == "https://blog.example/2021/04/cherry-desk/"
    assert (
        permalink_url("https://b.example", "/{slug}/", post_id="café & tea")
        == "https://b.example/caf%C3%A9%20%26%20tea/"
    )
    assert permalink_url("https://b.example", "/{year}/{slug}/", post_id="x") == ""  # no date: no address
    assert permalink_url("", "/{slug}/", post_id="x") == ""


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("{slug}", "starts with /"),
        ("/{year}/", "must contain {slug}"),
        ("/{author}/{slug}/", "unknown field {author}"),
        ("/:author/:title/", "unknown field ':author'"),
        ("/{slug", "cannot be used"),
        ("https://b.example/{slug}/", "starts with /"),
    ],
)
def test_a_bad_permalink_pattern_is_a_clear_config_error(pattern, why):
    with pytest.raises(ConfigError, match="permalink") as info:
        Settings.load({"permalink": pattern}, environ={})
    assert why in str(info.value)
    assert permalink_pattern("/%category%/%postname%.html") == "/{collection}/{slug}.html"


def test_a_bad_site_url_is_a_clear_config_error():
    with pytest.raises(ConfigError, match="site_url"):
        Settings.load(environ={"INKWELL_SITE_URL": "blog.example"})


# Stored ----------------------------------------------------------------------------------------------


def cli(*args: str, env: dict | None = None):
    result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_the_demo_gets_addresses_from_its_slugs_with_a_site_url(tmp_path):
    db = str(tmp_path / "db")
    env = {"INKWELL_SITE_URL": "https://blog.example", "INKWELL_PERMALINK": "/:year/:month/:slug/"}
    cli("ingest", str(DEMO / "posts"), "--data-dir", db, env=env)
    listed = [
        json.loads(line) for line in cli("posts", "list", "--json", "--data-dir", db).stdout.splitlines()
    ]
    by_id = {p["post_id"]: p for p in listed}
    assert by_id["cherry-writing-desk"]["url"] == "https://blog.example/2021/04/cherry-writing-desk/"
    assert all(p["url"].startswith("https://blog.example/") for p in listed if p["date"])
    assert all(p["url"].endswith(f"/{p['post_id']}/") for p in listed if p["url"])
    shown = json.loads(cli("posts", "show", "cherry-writing-desk", "--data-dir", db).stdout)
    assert shown["url"] == by_id["cherry-writing-desk"]["url"]


def test_dates_written_out_are_stored_as_iso_days_and_get_dated_addresses(tmp_path):
    posts, db = tmp_path / "posts", str(tmp_path / "db")
    dates = {
        "words": '"March 5, 2020"',
        "day-first": "5 March 2020",
        "slashes": "2020/03/05",
        "rfc": "Thu, 05 Mar 2020 10:00:00 +0000",
        "with-zone": "2021-12-31T23:59:00+05:00",  # ISO: kept as it is
        "us": "03/04/2021",  # March or April: not guessed
    }
    for name, date in dates.items():
        write(
            posts / f"{name}.md", f"---\ntitle: {name}\ndate: {date}\n---\nI fire the kiln on {name} days.\n"
        )
    env = {"INKWELL_SITE_URL": "https://blog.example", "INKWELL_PERMALINK": "/{year}/{month}/{slug}/"}

    run = cli("ingest", str(posts), "--data-dir", db, env=env)

    assert (
        f"warning {posts / 'us.md'}: date '03/04/2021' is ambiguous (day/month or month/day?): left out "
        "(write it as YYYY-MM-DD)" in run.stderr
    )
    listed = [
        json.loads(line) for line in cli("posts", "list", "--json", "--data-dir", db).stdout.splitlines()
    ]
    stored = {p["post_id"]: (p["date"], p["url"]) for p in listed}
    march = {name: ("2020-03-05", f"https://blog.example/2020/03/{name}/") for name in dates}
    assert stored == {
        **march,
        "with-zone": ("2021-12-31T23:59:00+05:00", "https://blog.example/2021/12/with-zone/"),
        "us": ("", ""),
    }
    # A JSON post's date is read the same way.
    item = json.dumps([{"title": "J", "text": "Jam.", "date": "5 Mar 2020"}])
    assert parsed("p.json", item).posts[0].date == "2020-03-05"


def test_a_root_path_joins_the_site_url_and_without_one_is_left_out_with_a_warning(tmp_path, embedder):
    post = parse_text(
        "---\nurl: /notes/tea/\n---\nGreen tea at 80 degrees.", "Tea", format="markdown", time_limit=None
    )
    with_site = Settings.load({"data_dir": tmp_path / "a", "site_url": "https://b.example/blog/"}, environ={})
    ingest_posts([post], with_site, embedder=embedder)
    assert Store(with_site.data_dir).get_post("tea")["url"] == "https://b.example/notes/tea/"
    bare = Settings.load({"data_dir": tmp_path / "b"}, environ={})
    report = ingest_posts([post], bare, embedder=embedder)
    assert Store(bare.data_dir).get_post("tea")["url"] == ""
    assert any("no site URL" in w.message for w in report.warnings)


def _without_url_column(store: Store) -> None:
    """Rewrite the posts table as an Inkwell from before addresses wrote it (no `url` column)."""
    old = store.posts.to_arrow().drop_columns(["url"])
    store.db.create_table(POSTS, old, mode="overwrite")


def test_a_table_without_the_column_reads_empty_addresses_then_upgrades_in_place(tmp_path, embedder):
    settings = Settings.load({"data_dir": tmp_path / "db"}, environ={})
    root = tmp_path / "posts"
    write(
        root / "tea.md",
        "---\ntitle: Tea\nurl: https://b.example/tea/\n---\nGreen tea at 80 degrees, never boiling.\n",
    )
    ingest_posts(parse_paths([root]).posts, settings, embedder=embedder)
    store = Store(settings.data_dir)
    _without_url_column(store)
    assert "url" not in store._open(POSTS).schema.names
    assert [p["url"] for p in store.list_posts()] == [""] and store.get_post("tea")["url"] == ""
    assert store.post_urls() == {}
    hits = search("green tea temperature", settings, store=store, embedder=embedder).hits
    assert hits and all(h.url == "" for h in hits)
    before = store.versions()
    write(
        root / "coffee.md",
        "---\ntitle: Coffee\nurl: https://b.example/coffee/\n---\nCoffee in the mornings only.\n",
    )
    report = ingest_posts(parse_paths([root]).posts, settings, embedder=embedder)
    assert report.ok and "url" in store._open(POSTS).schema.names
    assert store.post_urls() == {"coffee": "https://b.example/coffee/"}  # tea unchanged: skipped, ""
    assert store.versions().posts > before.posts
    store.undo(report.change_id)  # the change started on the old table: undo still works
    assert {p["post_id"] for p in store.list_posts()} == {"tea"}


def test_the_owner_edits_an_address_without_reembedding_and_can_undo_it(tmp_path, embedder):
    settings = Settings.load({"data_dir": tmp_path / "db"}, environ={})
    post = parse_text("Green tea at 80 degrees, never boiling.", "Tea", time_limit=None)
    ingest_posts([post], settings, embedder=embedder)
    store = Store(settings.data_dir)
    chunks_before = store.versions().chunks
    assert store.set_post_url("tea", "https://b.example/tea/")
    assert store.get_post("tea")["url"] == "https://b.example/tea/"
    assert store.versions().chunks == chunks_before  # no chunk was rewritten
    hits = search("green tea", settings, store=store, embedder=embedder).hits
    assert hits[0].url == "https://b.example/tea/"  # the memo sees the new posts version
    assert rebuild_post(store.get_post("tea")).url == "https://b.example/tea/"  # a forced re-ingest keeps it
    change = store.changes(limit=1)[0]
    assert "address" in change.label
    store.undo(change.change_id)
    assert store.get_post("tea")["url"] == ""
    assert not store.set_post_url("nope", "https://b.example/")


def test_an_ingest_undo_after_an_address_edit_is_refused(tmp_path, embedder):
    """The edit is a change of its own: undoing the ingest before it would silently lose it."""
    settings = Settings.load({"data_dir": tmp_path / "db"}, environ={})
    report = ingest_posts(
        [parse_text("Green tea at 80 degrees.", "Tea", time_limit=None)], settings, embedder=embedder
    )
    store = Store(settings.data_dir)
    store.set_post_url("tea", "https://b.example/tea/")
    from core.store import UndoRefused

    with pytest.raises(UndoRefused, match="changed since"):
        store.undo(report.change_id)

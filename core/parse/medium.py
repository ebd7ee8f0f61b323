"""Medium exports (Settings → Download your information, a `.zip`): one `posts/*.html` page per post, an
h-entry with the title (`.p-name`), body (`section[data-field=body]`), date (`time.dt-published`) and
canonical address (`a.p-canonical`). Drafts are named `draft_…html`; Medium exports no tags."""

from __future__ import annotations

from posixpath import basename, splitext
from urllib.parse import urlparse

from lxml import etree, html

from core.models import Post
from core.parse.exported import MEDIUM, ExportPosts, LeftOut, html_post
from core.parse.fields import Context
from core.parse.safezip import SafeZip


def medium_posts(archive: SafeZip) -> list[str]:
    """The export's post pages: `.html` files in a `posts/` folder (at the top or one folder down)."""
    return [
        n
        for n in archive.names
        if n.lower().endswith(".html") and n.split("/")[-2:-1] == ["posts"] and n.count("/") <= 2
    ]


def parse_medium(ctx: Context, archive: SafeZip, members: list[str]) -> list[Post]:
    left_out = LeftOut()
    posts = ExportPosts()
    for member in members:
        draft = basename(member).startswith("draft_")
        if draft and not ctx.options.include_drafts:
            left_out.add("draft")
            continue
        _post(ctx, archive.read(member), member, draft, posts)
    left_out.report(ctx)
    return posts.settled(ctx)


def _post(ctx: Context, data: bytes, member: str, draft: bool, posts: ExportPosts) -> Post | None:
    where = f"{member}: "
    try:
        page = html.document_fromstring(data)
    except (etree.ParserError, ValueError):
        ctx.error(f"{where}is not an HTML page; skipped")
        return None
    body = page.find(".//section[@data-field='body']")
    if body is None:
        ctx.error(f"{where}has no post body (section data-field=body): not a Medium post page; skipped")
        return None
    for title_graf in body.xpath(".//*[contains(@class, 'graf--title')]"):
        title_graf.drop_tree()  # the title again, as the body's first heading
    canonical = _first(page, ".//a[contains(concat(' ', @class, ' '), ' p-canonical ')]/@href")
    stem = splitext(basename(member))[0].removeprefix("draft_")
    segments = [s for s in urlparse(canonical).path.split("/") if s]
    # "/@user/title-slug-<id>" names the post; a draft's "/p/<id>" does not, its file name does.
    slug = segments[-1] if segments and segments[0] != "p" else stem.split("_", 1)[-1]
    return html_post(
        ctx,
        body=html.tostring(body, encoding="unicode"),
        title=_first(page, ".//*[contains(concat(' ', @class, ' '), ' p-name ')]//text()") or "",
        slug=slug,
        date=_first(page, ".//time[contains(@class, 'dt-published')]/@datetime") or "",
        tags=[],
        url="" if draft else canonical,
        where=where,
        export=MEDIUM,
        into=posts,
    )


def _first(page: html.HtmlElement, path: str) -> str:
    found = [" ".join(str(v).split()) for v in page.xpath(path)]
    return " ".join(v for v in found if v) if path.endswith("text()") else (found[0] if found else "")

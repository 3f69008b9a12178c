"""MkDocs hooks of the documentation site (mkdocs.yml: `hooks`).

The site mirrors the repository: RESULTS.md, docs/experiments/ and every file their pages
or the README link to are added at their repository paths, so the links that work on the
repository work on the site. A page of docs/site/ may hold one marker line, replaced here:

    <!-- README: intro | Set up (fresh machine) -->   those sections of README.md
    <!-- lbs-pz --help -->                            every command's --help (lbs_pz.cli)
    <!-- hanabi_v0 spaces -->                         hanabi_v0's table, from the env itself
"""

import argparse
import contextlib
import os
import pathlib
import re

from mkdocs.structure.files import File

from lbs_pz.cli import build_parser
from lbs_pz.envs import hanabi_v0

ROOT = pathlib.Path(__file__).resolve().parents[2]
MIRRORED = ("RESULTS.md", "docs/experiments")
LINK = re.compile(r"\]\(([^)\s#]+)")
FOLDER_LINK = re.compile(r"\]\(([^)\s#:]+/)\)")
MARKER = re.compile(r"^<!-- (README: .*|lbs-pz --help|hanabi_v0 spaces) -->$", re.M)
HELP_COLUMNS = "100"


def _pages():
    """The repository's Markdown files that become pages of the site."""
    for name in MIRRORED:
        path = ROOT / name
        yield from sorted(path.rglob("*.md")) if path.is_dir() else [path]


def _linked(page):
    """The repository files that the Markdown file `page` links to."""
    for target in LINK.findall(page.read_text()):
        if "://" not in target and not target.startswith("mailto:"):
            path = (page.parent / target).resolve()
            if path.is_file() and path.is_relative_to(ROOT):
                yield path


def on_files(files, config):
    pages = list(_pages())
    paths = set(pages)
    for page in [*pages, ROOT / "README.md"]:
        paths.update(_linked(page))
    for path in sorted(paths):
        files.append(File(str(path.relative_to(ROOT)), str(ROOT), config.site_dir,
                          config.use_directory_urls))
    return files


def readme_sections(titles):
    """The README's `## ` sections named in `titles` ("intro": the text before the first)."""
    text = (ROOT / "README.md").read_text()
    chunks = re.split(r"^(?=## )", text, flags=re.M)
    intro = chunks[0].split("\n", 1)[1]
    sections = {chunk.splitlines()[0][3:].strip(): chunk for chunk in chunks[1:]}
    return "\n".join(intro if title == "intro" else sections[title] for title in titles)


def cli_help():
    """Each command's --help, as `lbs-pz COMMAND --help` prints it at 100 columns."""
    parser = build_parser()
    commands = next(action for action in parser._actions
                    if isinstance(action, argparse._SubParsersAction)).choices
    with _columns(HELP_COLUMNS):
        helps = [("lbs-pz", parser.format_help())]
        helps += [(f"lbs-pz {name}", sub.format_help()) for name, sub in commands.items()]
    return "\n".join(f"## `{name}`\n\n```text\n{text}```\n" for name, text in helps)


@contextlib.contextmanager
def _columns(columns):
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = columns
    try:
        yield
    finally:
        os.environ.pop("COLUMNS") if before is None else os.environ.update(COLUMNS=before)


def env_table():
    """hanabi_v0's summary table (PettingZoo's style), read from a 2-player env."""
    env = hanabi_v0.env()
    env.reset(seed=0)
    agent = env.agents[0]
    action, observation = env.action_space(agent), env.observation_space(agent)
    rows = [("Import", "`from lbs_pz.envs import hanabi_v0`"),
            ("Actions", "Discrete"), ("Parallel API", "No"), ("Manual control", "No"),
            ("Agents", f"`agents = {env.possible_agents}` (2 players)"),
            ("Number of agents", "2 to 5"),
            ("Action shape", f"`{action}`"),
            ("Observation shape", f"`{observation['observation'].shape}` (2 players)"),
            ("Action mask", f"`{observation['action_mask']}`"),
            ("Observation values", "0 or 1")]
    env.close()
    return "| | |\n|---|---|\n" + "\n".join(f"| {key} | {value} |" for key, value in rows)


def _expand(match):
    marker = match.group(1)
    if marker.startswith("README: "):
        return readme_sections([title.strip() for title in marker[8:].split("|")])
    return cli_help() if marker == "lbs-pz --help" else env_table()


def _folder_to_readme(markdown, base):
    """`](FOLDER/)` -> `](FOLDER/README.md)` where the folder has one (the page of its
    index), as the repository's host shows a folder."""
    def replace(match):
        readme = match.group(1) + "README.md"
        return f"]({readme})" if (base / readme).is_file() else match.group(0)
    return FOLDER_LINK.sub(replace, markdown)


def on_page_markdown(markdown, page, config, files):
    source = pathlib.Path(page.file.abs_src_path)
    base = ROOT if source.is_relative_to(ROOT / config.docs_dir) else source.parent
    return _folder_to_readme(MARKER.sub(_expand, markdown), base)

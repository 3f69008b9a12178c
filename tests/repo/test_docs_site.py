"""The documentation site (mkdocs.yml, docs/site/) builds with `mkdocs build --strict`:
no warning, a page per API module, the CLI's help, RESULTS.md and the experiments."""

import pytest

from tests.helpers.scripts import load_script

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings_handlers.python")

COMMANDS = ("demo", "eval", "compare", "train-belief", "train-value", "train-blueprint",
            "distill", "improve", "search-games", "belief-quality", "paper", "serve", "models")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    builder = load_script("docs/site/build_site.py")
    out = tmp_path_factory.mktemp("site")
    return builder, out, builder.build(out)


def test_site_builds_strictly(site):
    _, _, figures = site
    assert figures["returncode"] == 0 and figures["warnings"] == [], figures["log"][-4000:]


def test_every_api_module_has_its_page(site):
    builder, out, figures = site
    for module in builder.API_MODULES:
        page = (out / "api" / module / "index.html").read_text()
        assert f'id="lbs_pz.{module}"' in page, module
        assert figures["api_objects"][module] > 0, module
    assert 'id="lbs_pz.engine.HanabiState"' in (out / "api/engine/index.html").read_text()


def test_cli_environment_results_and_experiments_pages(site):
    _, out, _ = site
    cli = (out / "cli" / "index.html").read_text()
    assert all(f"usage: lbs-pz {command}" in cli for command in COMMANDS)
    environment = (out / "environment" / "index.html").read_text()
    assert "Discrete(20)" in environment and "player_0" in environment
    assert (out / "RESULTS" / "index.html").is_file()
    assert (out / "docs" / "experiments" / "index.html").is_file()
    tutorials = (out / "tutorials" / "index.html").read_text()
    assert "Bring your own blueprint" in tutorials and "LBSAgent" in tutorials

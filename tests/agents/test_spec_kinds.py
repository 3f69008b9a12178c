"""The registry of blueprint spec kinds (`lbs_pz.agents.BLUEPRINT_KINDS`): a kind added in
one place reaches every surface that loads, lists or vets specs (the loader, the CLI's
help, the trainers' help, the page's refusal rules)."""

from __future__ import annotations

import os

import pytest

from tests.helpers.paths import ROOT
from lbs_pz.agents import (BLUEPRINT_KINDS, BlueprintError, BlueprintKind, RuleBot,
                           load_blueprint, register_blueprint_kind, spec_forms, spec_help)
from lbs_pz.cli import build_parser
from lbs_pz.web.games import ApiError, GameStore


def _help(capsys, *command) -> str:
    with pytest.raises(SystemExit):
        build_parser().parse_args([*command, "--help"])
    return capsys.readouterr().out


@pytest.fixture
def kinds():
    """Two kinds added for the test (one reads a file, one runs code), removed after it."""
    loaded = []

    def load(rest):
        loaded.append(rest)
        bot = RuleBot("simple")
        bot.spec = "toyfile:" + rest
        return bot
    added = [register_blueprint_kind(BlueprintKind("toyfile", "toyfile:PATH", "a toy's file",
                                                   load, reads_file=True)),
             register_blueprint_kind(BlueprintKind("toycode", "toycode:MODULE", "a toy's code",
                                                   load, runs_code=True))]
    yield loaded
    for kind in added:
        del BLUEPRINT_KINDS[kind.prefix]


def test_the_shipped_kinds_and_their_page_rules():
    assert list(BLUEPRINT_KINDS) == ["sb3", "lstm", "rllib", "py", "hle"]
    assert {p for p, k in BLUEPRINT_KINDS.items() if k.reads_file} == {"sb3", "lstm", "rllib"}
    assert {p for p, k in BLUEPRINT_KINDS.items() if k.runs_code} == {"py", "hle"}
    assert spec_forms() == ("NAME | sb3:PATH | lstm:PATH | rllib:DIR | py:MODULE_OR_FILE.py:CLASS"
                            " | hle:MODULE_OR_FILE.py:CLASS")
    readme = open(os.path.join(ROOT, "README.md")).read()
    for prefix in BLUEPRINT_KINDS:          # the README shows a newcomer every kind
        assert f"`{prefix}:" in readme, prefix


def test_a_new_kind_reaches_every_surface(kinds, capsys, tmp_path):
    assert load_blueprint("TOYFILE:some/where").spec == "toyfile:some/where"
    assert kinds == ["some/where"]
    assert "toyfile:PATH" in spec_help() and "a toy's code" in spec_help()
    assert "toyfile:PATH" in spec_forms()
    for command in (("eval",), ("compare",), ("distill",), ("train-belief",)):
        text = _help(capsys, *command)
        assert "toyfile:PATH" in text and "toycode:MODULE" in text, command
    # the page: a kind that reads a file, only by a shipped model's name or with
    # allow_files; one that runs code, only with allow_code; the server's own, always
    strict = GameStore()
    for spec in ("toyfile:/etc/passwd", f"toyfile:{tmp_path}"):
        with pytest.raises(ApiError) as err:
            strict.check_spec(spec, "seat 0")
        assert err.value.status == 403 and "--allow-files" in str(err.value)
    with pytest.raises(ApiError) as err:
        strict.check_spec("toycode:x", "seat 0")
    assert err.value.status == 403 and "--allow-code" in str(err.value)
    assert GameStore(allow_files=True).check_spec("toyfile:a", "s") == "toyfile:a"
    assert GameStore(allow_code=True).check_spec("toycode:x", "s") == "toycode:x"
    assert GameStore(own_specs=("toycode:x",)).check_spec("toycode:x", "s") == "toycode:x"
    assert not kinds[1:]        # vetting loads nothing


def test_registering_refuses_a_taken_or_bad_prefix(kinds):
    for prefix in ("lstm", "strong", "toyfile", "Bad", "a:b", ""):
        with pytest.raises(ValueError):
            register_blueprint_kind(BlueprintKind(prefix, f"{prefix}:X", "x", lambda r: None))
    with pytest.raises(BlueprintError, match="unknown blueprint spec prefix 'nokind:'"):
        load_blueprint("nokind:x")
    with pytest.raises(BlueprintError, match="names no file"):
        load_blueprint("toyfile:")

"""train-blueprint and distill name their net by a preset (`--arch`) and overrides: the
defaults make the same nets as the switches did, every recorded command still parses
and makes the architecture of the checkpoint it made, and a start (--init) sets the
architecture."""

import dataclasses
import glob
import json
import os
import re
import shlex
import subprocess
import sys

import pytest
import torch

from lbs_pz.agents.public_lstm import ARCHITECTURES, PublicLSTMNet
from lbs_pz.cli import build_parser
from lbs_pz.cli.options import dataclass_from
from lbs_pz.engine import HanabiConfig
from lbs_pz.models.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from lbs_pz.train.blueprint import init_checkpoint, scratch_net
from lbs_pz.train.common import game_config, net_options
from lbs_pz.train.configs import (ARCH_OVERRIDES, ARCH_PRESETS, BLUEPRINT_ARCH,
                                  BlueprintTrainConfig, DistillConfig)
from lbs_pz.train.distill import start_net

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "lbs_pz", "models")
OLD_MODELS = "/tmp/old_models"          # the retired models' files, where a machine has them
CONFIGS = {"train-blueprint": BlueprintTrainConfig, "distill": DistillConfig}
SMALL = dict(players=2, colors=3, ranks=3, hand_size=3)


def _parse(line: str):
    """The config dataclass a recorded `lbs-pz train-blueprint|distill ...` line makes."""
    argv = shlex.split(line, comments=True)[1:]
    args = build_parser().parse_args(argv)
    return dataclass_from(CONFIGS[argv[0]], args)


def _model_file(name_or_path: str):
    """The file of a model named by a recorded command (NAME, NAME.pt or a path ending in
    one): shipped, or retired and kept in OLD_MODELS; None when not on this machine."""
    stem = os.path.basename(name_or_path)
    stem = stem[:-3] if stem.endswith(".pt") else stem
    for folder in (MODELS, OLD_MODELS):
        path = os.path.join(folder, stem + ".pt")
        if os.path.isfile(path):
            return path
    return None


def _recorded_lines():
    """(model name, command line) of every train-blueprint / distill line the manifest
    records (`command` and `remake` of every entry and every retired entry)."""
    with open(os.path.join(MODELS, "manifest.json")) as f:
        manifest = json.load(f)
    out = []
    for entry in manifest["models"] + manifest["retired"]:
        for line in [entry.get("command", "")] + list(entry.get("remake", [])):
            if re.match(r"lbs-pz (train-blueprint|distill) ", line):
                out.append((entry["name"], line))
    return out


RECORDED = _recorded_lines()


def test_the_presets_here_are_the_nets_presets():
    assert list(ARCH_PRESETS) == list(ARCHITECTURES)
    assert set(ARCH_OVERRIDES) == set(ARCHITECTURES["paper"])
    for config_class in CONFIGS.values():
        fields = {f.name: f.default for f in dataclasses.fields(config_class)}
        assert all(fields[name] is None for name in ARCH_OVERRIDES)


def test_the_defaults_make_the_same_nets_as_before():
    # train-blueprint: the paper's net, 256 wide; distill: card features, no hint head
    assert net_options(BlueprintTrainConfig(), BLUEPRINT_ARCH) == ARCHITECTURES["paper"]
    assert net_options(DistillConfig()) == ARCHITECTURES["card_features"]
    # the former switches: --conventions brought its hint head, --no-hint-head took it off
    assert net_options(DistillConfig(conventions=True)) == ARCHITECTURES["conventions"]
    assert net_options(DistillConfig(conventions=True, hint_head=False)) == dict(
        ARCHITECTURES["conventions"], hint_head=False)
    # the hint head reads the convention features: without them it stays off
    assert net_options(DistillConfig(hint_head=True, card_features=True, hidden=256,
                                     fusion="product")) == ARCHITECTURES["card_features"]
    assert net_options(DistillConfig(hidden=16, fusion="concat", public_features=True)) == dict(
        ARCHITECTURES["card_features"], hidden=16, fusion="concat", public_features=True)
    for name, options in ARCHITECTURES.items():
        assert net_options(DistillConfig(arch=name)) == options


@pytest.mark.parametrize("name,line", RECORDED)
def test_every_recorded_command_makes_its_checkpoints_architecture(name, line):
    """Each line parses with today's parser; where the checkpoint it made is here, the
    net it resolves to has that checkpoint's architecture. A start (--init) that is not
    here is stood in for by the made checkpoint: every such run keeps its start's policy
    (the value head and the centring are what it may change)."""
    config = _parse(line)
    made = _model_file(name)
    if made is None:
        pytest.skip(f"{name}: its file is not on this machine")
    want = load_checkpoint(made, "public_lstm")["architecture"]
    game = game_config(config)
    if config.init:
        spec = config.init[len("lstm:"):] if config.init.startswith("lstm:") else config.init
        assert not spec.startswith("distill:")
        config = dataclasses.replace(config, init=_model_file(spec) or made, resume="")
    quiet = lambda *a: None                             # noqa: E731
    if isinstance(config, DistillConfig):
        net, _ = start_net(config, game, log=quiet)
    elif config.init:
        net = init_checkpoint(config.resolved(), game, log=quiet)["net"]
    else:
        net = scratch_net(config, game)
    assert net.arch() == want, line


def _documented_lines():
    """Every `lbs-pz train-blueprint|distill ...` command written in the README, the
    experiments and the benchmarks (continuation lines joined)."""
    files = [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "experiments", "*.md"))
        + glob.glob(os.path.join(ROOT, "benchmarks", "*.py"))
        + glob.glob(os.path.join(ROOT, "benchmarks", "*.sh")))
    out = []
    for path in files:
        text = open(path).read().replace("\\\n", " ")
        for match in re.finditer(r"lbs-pz (?:train-blueprint|distill)(?: [^`\n\"'()]*)?",
                                 text):
            line = match.group(0).split("  #")[0].strip()
            if "$" in line or "{" in line or "..." in line:
                continue                     # a shell or format template, not a command
            out.append((os.path.relpath(path, ROOT), line))
    return out


def test_documented_commands_parse():
    lines = _documented_lines()
    assert len(lines) > 5
    for where, line in lines:
        # prose may name an option and leave its value out ("`--init` (PATH)"): a value
        # put after the last option must then make it parse
        for tried in (line, line + " X"):
            try:
                _parse(tried)
                break
            except SystemExit:
                pass
        else:
            pytest.fail(f"{where}: {line!r} does not parse")


def test_help_groups_the_overrides():
    for command in CONFIGS:
        out = subprocess.run([sys.executable, "-m", "lbs_pz.cli", command, "--help"],
                             capture_output=True, text=True, check=True).stdout
        assert "architecture overrides" in out and "--arch {paper,card_features," in out
        overrides = out[out.index("architecture overrides"):]
        for name in ARCH_OVERRIDES:
            assert f"--{name.replace('_', '-')}" in overrides, (command, name)
        for name in ARCH_PRESETS:
            assert f"\n    {name} " in out, (command, name)


def test_arch_options_parse_and_resolve():
    config = _parse("lbs-pz distill --arch conventions_maxq --hidden 128 --no-hint-head")
    assert config.arch == "conventions_maxq" and config.hidden == 128
    assert net_options(config) == dict(ARCHITECTURES["conventions_maxq"], hidden=128,
                                       hint_head=False)
    assert _parse("lbs-pz train-blueprint").arch is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["distill", "--arch", "nope"])
    for bad in (dict(arch="nope"), dict(hidden=0), dict(fusion="sum"), dict(dueling="min"),
                dict(value_lstm=8), dict(value_hidden=-1)):
        with pytest.raises(ValueError):
            DistillConfig(**bad).check()
        with pytest.raises(ValueError):
            BlueprintTrainConfig(**bad).check()


def test_q_learning_builds_the_preset_and_refuses_a_max_centred_one():
    game = HanabiConfig(**SMALL)
    net = scratch_net(BlueprintTrainConfig(arch="conventions", hidden=16), game)
    assert net.options() == dict(ARCHITECTURES["conventions"], hidden=16)
    with pytest.raises(ValueError, match="mean-centred"):
        scratch_net(BlueprintTrainConfig(arch="conventions_maxq"), game)
    net = scratch_net(BlueprintTrainConfig(arch="conventions_maxq", dueling="mean"), game)
    assert net.dueling == "mean"


def test_a_start_sets_the_architecture(tmp_path):
    game = HanabiConfig(**SMALL)
    torch.manual_seed(0)
    net = PublicLSTMNet.from_preset("conventions", game, hidden=16)
    path = str(tmp_path / "start.pt")
    save_checkpoint(path, "public_lstm", game, net.arch(), net.state_dict(),
                    trained_for=None, info={})
    quiet = lambda *a: None                             # noqa: E731
    # train-blueprint: the start's net whatever --hidden was; a contrary override is an error
    for ok in (dict(), dict(hidden=16), dict(arch="conventions", hidden=16)):
        tc = BlueprintTrainConfig(init=path, **SMALL, **ok).resolved()
        assert init_checkpoint(tc, game, log=quiet)["net"].arch() == net.arch()
    for bad in (dict(hidden=32), dict(conventions=False), dict(arch="conventions")):
        with pytest.raises(CheckpointError, match="the start sets the architecture"):
            init_checkpoint(BlueprintTrainConfig(init=path, **SMALL, **bad).resolved(), game,
                            log=quiet)
    # distill: the start's net, re-centred by --dueling, a value head with --value-only
    got, _ = start_net(DistillConfig(init=path, **SMALL), game, log=quiet)
    assert got.arch() == net.arch()
    got, _ = start_net(DistillConfig(init=path, value_only=True, dueling="max",
                                     value_hidden=8, value_lstm=8, **SMALL), game, log=quiet)
    assert got.arch() == dict(net.arch(), dueling="max", value_hidden=8, value_lstm=8)
    got, _ = start_net(DistillConfig(init=path, value_only=True, arch="conventions_value",
                                     **SMALL), game, log=quiet)
    assert (got.value_hidden, got.value_lstm, got.dueling) == (256, 256, "mean")
    with pytest.raises(ValueError, match="the start sets the architecture"):
        start_net(DistillConfig(init=path, fusion="concat", **SMALL), game, log=quiet)

"""`lbs_pz.agents.features` (the nets' inputs in one public module) and the public-LSTM
architecture presets (`ARCHITECTURES`, `PublicLSTMNet.from_preset`)."""

from __future__ import annotations

import ast
import glob
import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from tests.helpers.engine import positions

import lbs_pz
from lbs_pz.agents import features
from lbs_pz.agents.public_lstm import (ARCHITECTURES, CardFeatures, PublicLSTMNet, preset_of,
                                       seat_masks)
from lbs_pz.agents.rule_bots import _bots
from lbs_pz.engine import HanabiBatch, HanabiConfig
from lbs_pz.engine.features import private_features, public_features
from lbs_pz.models.checkpoint import game_of, load_checkpoint

torch.set_num_threads(1)

GAMES = [dict(), dict(players=3), dict(players=2, colors=3, ranks=3, hand_size=3),
         dict(observation_type="minimal")]


def _batch(game: dict, seed: int = 3, games: int = 2) -> HanabiBatch:
    config = HanabiConfig(**game)
    return HanabiBatch.from_states(positions(config, games, seed=seed, every=4))


# --- the public module gives the same arrays as the code it replaces --------------------------


@pytest.mark.parametrize("game", GAMES)
def test_public_part_and_seat_inputs_are_the_split_of_each_state(game):
    batch = _batch(game)
    config = batch.config
    states = [batch.get_state(i) for i in range(len(batch))]
    enc = features.encode_batch(batch)
    assert enc.shape == (len(batch), config.players, config.encoding_size)
    assert enc.dtype == np.float32
    pub = features.public_part(enc, config)
    for i, state in enumerate(states):
        np.testing.assert_array_equal(pub[i], public_features(state))
        for seat in range(config.players):
            np.testing.assert_array_equal(enc[i, seat], state.encode(seat))
            np.testing.assert_array_equal(
                enc[i, seat, :features.private_size(config)], private_features(state, seat))
    assert pub.shape[-1] == features.public_size(config)
    movers = features.seat_inputs(batch)
    np.testing.assert_array_equal(movers, enc[np.arange(len(batch)), batch.current_players()])


@pytest.mark.parametrize("game", GAMES[:3])
def test_seat_inputs_with_conventions_append_the_bots_rows(game):
    batch = _batch(game)
    config, n = batch.config, len(batch)
    f = _bots.convention_feature_size(config)
    assert features.convention_feature_size(config) == f
    enc = features.encode_batch(batch, conventions=True)
    assert enc.shape == (n, config.players, config.encoding_size + f)
    reader = features.ConventionReader(batch)
    for seat in range(config.players):
        seats = np.full(n, seat, dtype=np.int64)
        want = np.zeros((n, f), np.float32)
        _bots.convention_features(batch, seats, want)
        np.testing.assert_array_equal(enc[:, seat, config.encoding_size:], want)
        np.testing.assert_array_equal(enc[:, seat, :config.encoding_size],
                                      batch.encode(players=seats))
        np.testing.assert_array_equal(
            features.seat_inputs(batch, seats, conventions=True, reader=reader), enc[:, seat])
    # the public part reads seat 0's canonical columns only
    np.testing.assert_array_equal(features.public_part(enc, config),
                                  features.public_part(features.encode_batch(batch), config))


def test_the_convention_names_are_the_rule_bots_own():
    for name in ("convention_feature_size", "convention_features", "ConventionReader",
                 "CONVENTION_SLOT_PARTS", "CONVENTION_HINT_PARTS"):
        assert getattr(features, name) is getattr(_bots, name)
        assert getattr(lbs_pz.agents.rule_bots, name) is getattr(_bots, name)


@pytest.mark.parametrize("game", GAMES)
def test_card_features_match_the_torch_module(game):
    batch = _batch(game)
    config = batch.config
    layout = features.CardLayout.of(config)
    module = CardFeatures(players=config.players, obs_dim=config.encoding_size,
                          **CardFeatures.game_args(config))
    assert (module.size, module.public_size, module.fw_off, module.kn_off,
            module.has_knowledge) == (layout.size, layout.public_size, layout.fw_off,
                                      layout.kn_off, layout.has_knowledge)
    assert layout.has_knowledge == (config.observation_type != "minimal")
    enc = features.encode_batch(batch)                                # (N, P, E)
    mine = features.card_features(enc, config)
    assert mine.shape == enc.shape[:-1] + (layout.size,) and mine.dtype == np.float32
    np.testing.assert_array_equal(mine, module.forward_torch(torch.from_numpy(enc)).numpy())
    out = np.full((enc.shape[0] * enc.shape[1], layout.size), 7.0, np.float32)
    np.testing.assert_array_equal(features.card_features(enc, layout, out=out), mine)
    with pytest.raises(ValueError):
        features.card_features(enc.astype(np.float64), layout)
    with pytest.raises(ValueError):
        features.card_features(enc[..., 1:], layout)


def test_card_layout_refuses_bad_sizes():
    with pytest.raises(ValueError, match="colors must be a positive integer"):
        features.CardLayout(2, 658, 0, 5, 5, 50)
    with pytest.raises(ValueError, match="do not fit"):
        features.CardLayout(2, 100, 5, 5, 5, 50)


# --- presets -----------------------------------------------------------------------------


def test_every_preset_is_complete_and_builds_a_net_whose_forward_runs():
    config = HanabiConfig()
    keys = set(ARCHITECTURES["paper"])
    assert ARCHITECTURES and all(set(p) == keys for p in ARCHITECTURES.values())
    batch = _batch({}, games=1)
    legal = torch.from_numpy(seat_masks(batch.legal_masks(), batch.current_players(),
                                        config.players))[None]       # (1, T, P, M + 1)
    for name, preset in ARCHITECTURES.items():
        net = PublicLSTMNet.from_preset(name, config, hidden=16)
        assert net.options() == dict(preset, hidden=16)
        assert preset_of(net.options()) == (name, {"hidden": 16} if preset["hidden"] != 16
                                            else {})
        obs = torch.from_numpy(features.encode_batch(batch, conventions=net.conventions > 0))
        pub = torch.from_numpy(np.ascontiguousarray(features.public_part(obs.numpy(), config)))
        q, (h, c) = net(pub[None], obs[None], legal=legal)
        assert q.shape == (1, len(batch), config.players, config.num_moves + 1)
        assert h.shape == (1, 1, net.state_width) and torch.isfinite(q).all()
        # the full-width preset builds too, and is what for_config makes of its options
        full = PublicLSTMNet.from_preset(name, config)
        assert full.arch() == PublicLSTMNet.for_config(config, **preset).arch()


def test_from_preset_refuses_unknown_names_and_options():
    with pytest.raises(ValueError, match="unknown architecture 'nope'"):
        PublicLSTMNet.from_preset("nope", HanabiConfig())
    with pytest.raises(ValueError, match="unknown architecture options"):
        PublicLSTMNet.from_preset("paper", HanabiConfig(), width=3)
    with pytest.raises(ValueError, match="unknown architecture options"):
        preset_of(dict(width=3))


# Shipped checkpoints whose architecture is a preset with overrides (the preset's
# docstring says so); every other one is a preset exactly.
OVERRIDES = {"public_lstm_2p": {"hidden": 128}}


def _shipped_public_lstm():
    root = Path(lbs_pz.__file__).resolve().parent / "models"
    for path in sorted(glob.glob(str(root / "*.pt"))):
        ckpt = load_checkpoint(path)
        if ckpt["kind"] == "public_lstm":
            yield os.path.basename(path)[:-3], ckpt


def test_every_shipped_architecture_is_a_preset():
    found = list(_shipped_public_lstm())
    assert found, "no public-LSTM checkpoint ships"
    for name, ckpt in found:
        arch = ckpt["architecture"]
        net = PublicLSTMNet(**arch)
        preset, overrides = preset_of(net.options())
        assert overrides == OVERRIDES.get(name, {}), (name, preset, overrides)
        rebuilt = PublicLSTMNet.from_preset(preset, game_of(ckpt), **overrides)
        assert rebuilt.arch() == arch, name
        assert {k: v.shape for k, v in rebuilt.state_dict().items()} == \
            {k: v.shape for k, v in ckpt["weights"].items()}, name


# --- no module outside the rule bots imports their private extension ---------------------


def _imports_of_bots(path: Path, package: str):
    """Line numbers of the imports of lbs_pz.agents.rule_bots._bots in a .py file (at any
    depth, relative imports resolved)."""
    target = "lbs_pz.agents.rule_bots._bots"
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(a.name == target or a.name.startswith(target + ".") for a in node.names):
                yield node.lineno
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([module] if module else []))
            names = [f"{module}.{a.name}" for a in node.names]
            if module == target or module.startswith(target + ".") or target in names:
                yield node.lineno


_PYX_BOTS_IMPORT = re.compile(
    r"^\s*(?:from\s+lbs_pz\.agents\.rule_bots(?:\._bots\s+c?import|\s+c?import\s.*\b_bots\b)"
    r"|c?import\s+lbs_pz\.agents\.rule_bots\._bots\b)")


def test_no_module_outside_the_rule_bots_imports_their_private_module():
    root = Path(lbs_pz.__file__).resolve().parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        if "build" in rel.parts or rel.parts[:3] == ("lbs_pz", "agents", "rule_bots"):
            continue
        parts = list(rel.with_suffix("").parts)
        package = ".".join(parts if parts[-1] == "__init__" else parts[:-1])
        offenders += [f"{rel}:{line}" for line in _imports_of_bots(path, package)]
    for path in sorted(list(root.rglob("*.pyx")) + list(root.rglob("*.pxd"))):
        rel = path.relative_to(root.parent)
        if rel.parts[:3] == ("lbs_pz", "agents", "rule_bots"):
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if _PYX_BOTS_IMPORT.match(line):
                offenders.append(f"{rel}:{i}")
    offenders.sort(key=lambda where: (where.split(":")[0], int(where.split(":")[1])))
    assert not offenders, ("import the public names (lbs_pz.agents.features or "
                           "lbs_pz.agents.rule_bots) instead of lbs_pz.agents.rule_bots._bots: "
                           + ", ".join(offenders))

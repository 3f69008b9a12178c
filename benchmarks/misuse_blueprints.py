"""Misuse cases of the blueprints layer for benchmarks/misuse.py: (name, expectation, exception
class or None, snippet), in the format and with the PRELUDE described there."""

# A user's blueprints that reach for what is not theirs.
USER = """
import time
from lbs_pz.agents import as_blueprint
from lbs_pz.agents.python_blueprint import PythonBlueprint
from lbs_pz.engine import Move, encode_move
DISCARD_0 = encode_move(cfg, Move("discard", card_index=0))
class Cheat:
    name = "cheat"
    def act(self, state, seat=None):
        state.apply(state.legal_moves()[-1])     # spends a hint token in the state it got
        return DISCARD_0                         # then discards: illegal at 8 tokens
class Resetter:
    name = "resetter"
    def __init__(self, batch):
        self.batch = batch
    def act(self, state, seat=None):
        self.batch.reset(7)
        return state.legal_moves()[0]
    def rollout_own(self, batch, max_moves=-1):
        batch.reset(3)
        batch.step(np.argmax(batch.legal_masks(), 1))
        return np.ones(len(batch), dtype=np.int32)
def played(n=4, moves=2):
    b = HanabiBatch(cfg, n, seeds=1)
    for _ in range(moves):
        b.step(np.argmax(b.legal_masks(), 1))
    return b
"""

# Tiny value / belief / public-LSTM checkpoints, and a way to rewrite one.
TINY = """
import os, tempfile, resource, torch
from lbs_pz.agents.public_lstm import PublicLSTMBlueprint, PublicLSTMNet
from lbs_pz.models.checkpoint import save_checkpoint
from lbs_pz.search.beliefs.model import BeliefNet, BeliefNetConfig, load_belief, save_belief
from lbs_pz.search.value import ValueNetConfig, load_value, make_value_net, save_value
tmp = tempfile.mkdtemp()
paths = {k: os.path.join(tmp, k + ".pt") for k in ("value", "belief", "public_lstm")}
vcfg = ValueNetConfig(inputs=cfg.encoding_size + 5 * 25, hidden=8)
save_value(paths["value"], make_value_net(vcfg), vcfg, cfg, None)
save_belief(paths["belief"], BeliefNet(BeliefNetConfig(embed=8, hidden=8, decoder=8), cfg), cfg)
arch = dict(pub_dim=533, obs_dim=658, players=2, num_moves=20, hidden=8)
save_checkpoint(paths["public_lstm"], "public_lstm", cfg, arch, PublicLSTMNet(**arch).state_dict())
def rewrite(kind, change):
    ckpt = torch.load(paths[kind], weights_only=True)
    change(ckpt)
    out = os.path.join(tmp, kind + "_bad.pt")
    torch.save(ckpt, out)
    return out
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""

# A tiny RLlib module saved by RLlib, and a copy of it with one file replaced.
RLLIB = """
import os, pickle, resource, shutil, struct, tempfile, torch
from lbs_pz.agents.rllib_policy import CTOR_FILE, STATE_FILE, RLlibBlueprint, module_spec
small = HanabiConfig(players=2, colors=2, ranks=3, hand_size=3)
tmp = tempfile.mkdtemp()
good = os.path.join(tmp, "module")
module_spec(small, hidden=(8, 8)).build().save_to_path(good)
RLlibBlueprint.load(good)
with open(os.path.join(good, STATE_FILE), "rb") as fh:
    weights = pickle.load(fh)
def replaced(name, data):
    out = os.path.join(tmp, "bad")
    shutil.copytree(good, out)
    with open(os.path.join(out, name), "wb") as fh:
        fh.write(data)
    return out
MEMO_BOMB = b"\\x80\\x05N" + b"r" + struct.pack("<I", 1 << 30) + b"."
class Forged:
    def __init__(self, reduce): self.reduce = reduce
    def __reduce__(self): return self.reduce
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""

CASES = [
    # --- a blueprint cannot corrupt its caller ------------------------------------------------
    ("blueprint-act-mutates-caller-state", "raises", "BlueprintError",
     USER + "before = (state.move_history, state.information_tokens)\n"
     "try:\n    as_blueprint(Cheat()).act(state)\n"
     "finally:\n    assert (state.move_history, state.information_tokens) == before, "
     "'the caller state changed'"),
    ("blueprint-act-batch-mutates-world-state", "raises", "BlueprintError",
     USER + "b = HanabiBatch(cfg, 3, seeds=1); keys = b.public_history_keys()\n"
     "try:\n    as_blueprint(Cheat()).act_batch(b)\n"
     "finally:\n    assert b.public_history_keys() == keys, 'the batch changed'"),
    ("blueprint-resets-batch-in-rollout", "raises", "BlueprintError",
     USER + "b = played()\nas_blueprint(Resetter(b)).rollout(b, 5)"),
    ("blueprint-own-rollout-resets-batch", "raises", "BlueprintError",
     USER + "r = Resetter(None); r.rollout = r.rollout_own\n"
     "PythonBlueprint(r, check_calls=0).rollout(played(), 1)"),
    ("blueprint-own-act-batch-steps-batch", "raises", "BlueprintError",
     USER + "class Stepper:\n    name = 'stepper'\n"
     "    def act(self, state, seat=None): return state.legal_moves()[0]\n"
     "    def act_batch(self, batch):\n"
     "        batch.step(np.argmax(batch.legal_masks(), 1))\n"
     "        return np.argmax(batch.legal_masks(), 1)\n"
     "as_blueprint(Stepper()).act_batch(played())"),
    ("blueprint-act-never-returns", "raises", "BlueprintError",
     USER + "class Forever:\n    name = 'forever'\n"
     "    def act(self, state, seat=None):\n        while True:\n            pass\n"
     "start = time.monotonic()\n"
     "try:\n    PythonBlueprint(Forever(), time_limit=1).act(state)\n"
     "finally:\n    assert time.monotonic() - start < 5, 'not stopped within 5 s'"),
    ("blueprint-rollout-never-returns-in-search", "raises", "BlueprintError",
     USER + "from lbs_pz.search.agents import LBSAgent\n"
     "from lbs_pz.search.beliefs import make_belief\n"
     "class Later:\n    name = 'later'\n    calls = 0\n"
     "    def act(self, state, seat=None):\n        self.calls += 1\n"
     "        while self.calls > 3:\n            pass\n        return state.legal_moves()[0]\n"
     "LBSAgent(PythonBlueprint(Later(), time_limit=1), belief=make_belief('grounded'), "
     "depth=-1, rollouts=8).search(state)"),
    # --- results that cannot be true are refused ----------------------------------------------
    ("value-checkpoint-nan-weight", "raises", "CheckpointError",
     TINY + "load_value(rewrite('value', lambda c: c['weights']['2.weight'].view(-1)"
     ".__setitem__(0, float('nan'))))"),
    ("belief-checkpoint-inf-weight", "raises", "CheckpointError",
     TINY + "load_belief(rewrite('belief', lambda c: c['weights']['out_b'].view(-1)"
     ".__setitem__(0, float('inf'))))"),
    ("public-lstm-checkpoint-nan-weight", "raises", "CheckpointError",
     TINY + "PublicLSTMBlueprint.load(rewrite('public_lstm', lambda c: "
     "c['weights']['a_head.weight'].view(-1).__setitem__(0, float('nan'))))"),
    ("belief-checkpoint-hidden-6000", "raises", "CheckpointError",
     TINY + "path = rewrite('belief', lambda c: c['architecture'].__setitem__('hidden', 6000))\n"
     "before = peak()\n"
     "try:\n    load_belief(path)\n"
     "finally:\n    assert peak() - before < 100_000, 'allocated before refusing'"),
    ("belief-checkpoint-header-misfit", "raises", "CheckpointError",
     TINY + "path = rewrite('belief', lambda c: c['architecture'].__setitem__('hidden', 4000))\n"
     "before = peak()\n"
     "try:\n    load_belief(path)\n"
     "finally:\n    assert peak() - before < 100_000, 'allocated before refusing'"),
    ("public-lstm-checkpoint-too-many-parameters", "raises", "CheckpointError",
     TINY + "path = rewrite('public_lstm', lambda c: c['architecture'].update(pub_dim=60000, "
     "hidden=4000))\n"
     "before = peak()\n"
     "try:\n    PublicLSTMBlueprint.load(path)\n"
     "finally:\n    assert peak() - before < 100_000, 'allocated before refusing'"),
    ("rllib-ctor-memo-bomb", "raises", "CheckpointError",
     RLLIB + "path = replaced(CTOR_FILE, MEMO_BOMB)\n"
     "before = peak()\n"
     "try:\n    RLlibBlueprint.load(path)\n"
     "finally:\n    assert peak() - before < 50_000, 'allocated before refusing'"),
    ("rllib-state-memo-bomb", "raises", "CheckpointError",
     RLLIB + "path = replaced(STATE_FILE, MEMO_BOMB)\n"
     "before = peak()\n"
     "try:\n    RLlibBlueprint.load(path)\n"
     "finally:\n    assert peak() - before < 50_000, 'allocated before refusing'"),
    ("rllib-state-absurd-weight", "raises", "CheckpointError",
     RLLIB + "key = next(k for k in weights if k.endswith('weight'))\n"
     "weights[key].flat[0] = 3e38\n"
     "RLlibBlueprint.load(replaced(STATE_FILE, pickle.dumps(weights)))"),
    ("rllib-state-object-array-from-empty-list", "raises", "CheckpointError",
     RLLIB + "from numpy._core.multiarray import _reconstruct\n"
     "key = next(iter(weights))\n"
     "weights[key] = Forged((_reconstruct, (np.ndarray, (0,), b'b'), "
     "(1, (1 << 27,), np.dtype('O'), False, [])))\n"
     "path = replaced(STATE_FILE, pickle.dumps(weights))\n"
     "before = peak()\n"
     "try:\n    RLlibBlueprint.load(path)\n"
     "finally:\n    assert peak() - before < 50_000, 'allocated before refusing'"),
    ("lbs-nan-value-falls-back", "ok", None,
     "import warnings\n"
     "from lbs_pz.agents import RuleBot\n"
     "from lbs_pz.search.agents import LBSAgent\n"
     "from lbs_pz.search.beliefs import make_belief\n"
     "from lbs_pz.search.rollout_search import NON_FINITE\n"
     "nan_value = lambda worlds: np.full(len(worlds), np.nan)\n"
     "warnings.simplefilter('ignore')\n"
     "agent = LBSAgent(RuleBot('strong'), belief=make_belief('grounded'), value=nan_value, "
     "depth=2, rollouts=16)\n"
     "for _ in range(4):\n    state.apply(RuleBot('strong').act(state))\n"
     "r = agent.search(state)\n"
     "assert r.fallback and r.fallback_reason == NON_FINITE and not r.deviated\n"
     "assert r.move == RuleBot('strong').act(state)\n"
     "assert agent.fallbacks == 1 and agent.fallback_reasons == {NON_FINITE: 1}"),
]

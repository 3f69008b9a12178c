"""Evaluation, for users: what `lbs-pz eval`, `compare`, `demo` and `belief-quality` run.

    evaluate(blueprint, config, games, seed)   self-play of any blueprint -> EvalResult
    backends   collect(specs, ...) of `lbs_pz.search.methods.MethodSpec`s: every method on
               the same deals, inline / process pool / Ray
    report     summarize (mean +- s.e.m., paired difference to the blueprint), markdown,
               JSON, plot
    belief_quality   cross-entropy of beliefs over blueprint games

Every game here is dealt from the evaluation stream (`lbs_pz.engine.seeds.EVAL`), disjoint
from the deals training uses. Throughput benchmarks live outside the package, in
benchmarks/. Output paths and logs are checked and read by `lbs_pz.files`.
"""

from lbs_pz.eval.backends import collect
from lbs_pz.eval.evaluate import EvalResult, evaluate
from lbs_pz.eval.report import format_markdown, summarize
from lbs_pz.search.methods import MethodSpec

__all__ = ["EvalResult", "MethodSpec", "collect", "evaluate", "format_markdown", "summarize"]

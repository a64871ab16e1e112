"""The rank-1 lifting ℓ̃(u wᵀ) behind Theorem 3.1 of arXiv 2308.06671: models, liftings, Notebook 02's figures'
computations, checks.

* :mod:`.models` — the linear layer, the bilinear attention score and the ReLU neuron (:data:`MODELS`), and a
  point to evaluate them at (:class:`LiftingCase`);
* :mod:`.liftings` — the generic, w-free and natural liftings, their gradients, the chain rules and the noise
  traces (torch autograd, float64);
* :mod:`.experiments` — what each figure of Notebook 02 shows, frozen results;
* :mod:`.checks` — the registered proofs as code (:data:`LIFTING_CHECKS`);
* :mod:`.claims` — Notebook 02's other claims (the slice's determinants, traces along the orbit, A_F as a projection);
* :mod:`.exercises` — Notebook 02's "Check yourself" questions.

"The reply" (Notebook 02's word; the code's ``seed_…`` names) is the authors' reply to a reviewer about Theorem 3.1
of arXiv 2308.06671: it defines ℓ̃(u_i w_j, w_j, x) := ℓ(u, w, x), writes the chain rule with an index slip
(:func:`.liftings.seed_chain_rule`) and concludes ∂ℓ̃/∂w = 0 from Euler's identity, which does not follow
(:func:`.checks.check_generic_depends_on_w`).
"""

# The modules. A name not in __all__ is imported from its module (symsgd_core.lifting.<module>.<name>).
from . import checks, claims, exercises, experiments, liftings, models  # noqa: F401
from .exercises import EXERCISES
from .experiments import (
    DEMO_REFERENCE,
    DEMO_SAMPLES,
    ChainRulePoint,
    EulerView,
    OrbitSweep,
    OrbitView,
    RankOneSlice,
    SignCaveat,
    TracesView,
    chain_rule_point,
    demo_case,
    euler_view,
    orbit_sweep,
    orbit_view,
    rank_one_slice,
    sign_caveat,
    traces_view,
)
from .liftings import (
    generic_lifting_loss,
    natural_lifting_gradient,
    natural_lifting_loss,
    noise_traces,
    seed_chain_rule,
    w_free_lifting_gradient,
    w_free_lifting_loss,
)
from .models import MODELS, LiftingCase, RankOneModel, get_model, make_case

__all__ = [
    # models
    "MODELS", "LiftingCase", "RankOneModel", "get_model", "make_case",
    # the liftings
    "natural_lifting_loss", "natural_lifting_gradient", "w_free_lifting_loss", "w_free_lifting_gradient",
    "generic_lifting_loss", "noise_traces", "seed_chain_rule",
    # Notebook 02's experiments and their results
    "DEMO_REFERENCE", "DEMO_SAMPLES", "demo_case",
    "chain_rule_point", "euler_view", "orbit_sweep", "orbit_view", "rank_one_slice", "sign_caveat", "traces_view",
    "ChainRulePoint", "EulerView", "OrbitSweep", "OrbitView", "RankOneSlice", "SignCaveat", "TracesView",
    # checks, claims, exercises
    "checks", "claims", "EXERCISES",
]

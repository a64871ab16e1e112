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

from .checks import (
    LIFTING_CHECKS,
    check_chain_rule,
    check_euler_identity,
    check_generic_agrees,
    check_generic_depends_on_w,
    check_natural_differs,
    check_natural_tangent_action,
    check_noise_null_direction,
    check_rescaling_symmetry,
    check_sign_caveat,
    check_theorem31_traces,
    check_w_free_lifting,
)
from .exercises import EXERCISES
from .experiments import (
    DEMO_REFERENCE,
    DEMO_SAMPLES,
    ORBIT_RANGE,
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
    reference_ok,
    sign_caveat,
    traces_view,
)
from .liftings import (
    corrected_chain_rule,
    generic_lifting_gradients,
    generic_lifting_grid,
    generic_lifting_loss,
    generic_lifting_values,
    loss_gradients,
    majorant_scales,
    matrix_from_slice_coordinates,
    natural_lifting_gradient,
    natural_lifting_loss,
    noise_covariances_from_matrix_gradient,
    noise_traces,
    noise_traces_from_matrix_gradient,
    orbit_point,
    per_sample_losses,
    polar,
    power_step_direction,
    predictions,
    reference_condition,
    rotation,
    seed_chain_rule,
    sign_flip_losses,
    slice_coordinates,
    tangent_projection,
    w_free_lifting_gradient,
    w_free_lifting_loss,
    w_free_lifting_values,
)
from .models import (
    MODELS,
    LiftingCase,
    RankOneModel,
    bilinear_attention,
    default_cases,
    get_model,
    linear_layer,
    make_case,
    model_loss,
    relu_neuron,
    squared_error,
)

__all__ = [
    # models
    "MODELS", "LiftingCase", "RankOneModel", "bilinear_attention", "default_cases", "get_model", "linear_layer",
    "make_case", "model_loss", "relu_neuron", "squared_error",
    # liftings
    "corrected_chain_rule", "generic_lifting_gradients", "generic_lifting_grid", "generic_lifting_loss",
    "generic_lifting_values", "loss_gradients", "majorant_scales", "matrix_from_slice_coordinates",
    "natural_lifting_gradient", "natural_lifting_loss", "noise_covariances_from_matrix_gradient", "noise_traces",
    "noise_traces_from_matrix_gradient", "orbit_point", "per_sample_losses", "polar", "power_step_direction",
    "predictions", "reference_condition", "rotation", "seed_chain_rule", "sign_flip_losses", "slice_coordinates",
    "tangent_projection", "w_free_lifting_gradient", "w_free_lifting_loss", "w_free_lifting_values",
    # Notebook 02's figures
    "DEMO_REFERENCE", "DEMO_SAMPLES", "ORBIT_RANGE", "ChainRulePoint", "EulerView", "OrbitSweep", "OrbitView",
    "RankOneSlice", "SignCaveat", "TracesView", "chain_rule_point", "demo_case", "euler_view", "orbit_sweep",
    "orbit_view", "rank_one_slice", "reference_ok", "sign_caveat", "traces_view",
    # checks and exercises
    "LIFTING_CHECKS", "check_chain_rule", "check_euler_identity", "check_generic_agrees",
    "check_generic_depends_on_w", "check_natural_differs", "check_natural_tangent_action",
    "check_noise_null_direction", "check_rescaling_symmetry", "check_sign_caveat", "check_theorem31_traces",
    "check_w_free_lifting", "EXERCISES",
]

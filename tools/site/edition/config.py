"""The edition's choices: which slider of each controller moves in the static pages, how many frames, the budget.

Controllers are named by class (``type(controller).__name__``), not by module, so the choices survive the package
being re-laid-out. A controller not listed offers its first slider. Every other slider, every Run button and the
"Check yourself" boxes need the live notebook; each page says so.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SliderChoice:
    """The slider a controller offers in the edition.

    Attributes:
        slider: the control's name in ``controller.controls`` (``None``: the first slider).
        frames: the most frames to precompute (``None``: :data:`DEFAULT_FRAMES` for the controller's kind).
        why: one line on why this slider (for the maintainers; shown nowhere).
    """

    slider: str | None = None
    frames: int | None = None
    why: str = ""


#: Frames per slider when a choice does not say: analytic figures are cheap to compute; a re-simulating figure
#: costs one Run per frame when the edition is built (0.1–1.5 s each here).
DEFAULT_FRAMES = {"analytic": 11, "re-simulating": 7}

#: The fewest frames worth a slider; a figure that would need fewer to fit the budget is shipped without one.
MIN_FRAMES = 3

#: Hard limit on one page's own bytes (its HTML with every figure and frame inlined).
PAGE_BUDGET_BYTES = 10_000_000
#: What the frames of one page aim at (the rest of the budget is text, code and the figures' first state): the
#: builder lowers a slider's frame count when its figures are large, so the page stays under the limit.
FRAME_BUDGET_BYTES = 7_500_000

CHOICES: dict[str, SliderChoice] = {
    # 00
    "BalanceTeaser": SliderChoice("temperature", why="the teaser's point: the rate 4T of the bound"),
    # 01
    "SymmetryExplorer": SliderChoice("lam", 15, why="'Drag λ from one end to the other'"),
    "ThreeDynamics": SliderChoice("noise", 7, why="'Set the noise slider to 0: the orange path collapses onto GD'"),
    "BalanceEnsemble": SliderChoice("temperature", 7, why="'Raise T and Run: G balances faster'"),
    "ItoTermsExplorer": SliderChoice("u", 17, why="'set u = w: the Itô correction of G vanishes too'"),
    "Rank1Balance": SliderChoice("d_in", 8, why="'Set d_in = d_out … Set d_in = 8'"),
    "ReLUBalance": SliderChoice("hidden", 8, why="the live net's width (the paper-size run is precomputed)"),
    "DiscreteBreakdown": SliderChoice("lr", 9, why="'Lower η to 0.03 … Raise η step by step'"),
    # 02
    "OrbitController": SliderChoice("lam", 13, why="the orbit parameter λ"),
    "RankOneSetController": SliderChoice("phi", 13, why="the angle between the two rank-1 matrices"),
    "ChainRuleController": SliderChoice("sample", 16, why="one bar chart per sample of the batch"),
    "EulerController": SliderChoice("theta_w", 13, why="the direction of w (Euler's identity along it)"),
    "SignCaveatController": SliderChoice("lam", 11, why="the two branches along λ"),
    "TracesController": SliderChoice("lam", 13, why="'Tr_u ∝ 1/λ², Tr_w ∝ λ² along the orbit'"),
    # 03
    "PenaltyController": SliderChoice("depth", 7, why="the cusp appears for L ≥ 3"),
    "TrapController": SliderChoice("lr", 7, why="η: no jumps when small, collapse when large (section 8)"),
    "EnsembleController": SliderChoice("lr", 6, why="how often and how fast SGD jumps, against η"),
    "MechanismController": SliderChoice("forced_steps", 7, why="the length of the forced-sampling stretch"),
    "BasinController": SliderChoice("alpha", 7, why="'how big a push undoes a jump?'"),
    "AnnealController": SliderChoice("eps", 5, why="'which minimum is better at the current ε'"),
    "LangevinController": SliderChoice("temp_factor", 6, why="Langevin's temperature against SGD's"),
    # 04
    "DepthComparison": SliderChoice("temperature", 9, why="depth 0 vs depth 1 at the same T"),
    "PhaseTransition": SliderChoice("temperature", 13, why="the three phases along T"),
    "FluctuationInversion": SliderChoice("weight_decay", 7, why="γ moves T_c"),
    "WrongSign": SliderChoice("temperature", 6, why="the only slider"),
    "Tails": SliderChoice("temperature", 6, why="'The lines do not move with T for D ≥ 1 far out: try the slider'"),
    "DiscreteSGD": SliderChoice("temperature", 8, why="the only slider"),
    # 05
    "SdeCompareController": SliderChoice("m", 3, why="the SDE's step dt = η/m: the answer does not change with dt"),
    "SdeGridController": SliderChoice("setting", 3, why="the stored grid's three (η, γ)"),
    "BlowupController": SliderChoice("setting", 3, why="the blow-up hazards at the stored grid's three (η, γ)"),
    "JumpEventController": SliderChoice("route", 2, why="k* of row 0 against column 1"),
}


def choice_for(class_name: str) -> SliderChoice:
    """The choice for a controller class (the default choice when it is not listed)."""
    return CHOICES.get(class_name, SliderChoice())

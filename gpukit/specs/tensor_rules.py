"""Dense tensor figures from a vendor's "AI TOPS" headline: one rule per architecture and product
line, each citing the whitepaper whose tables state the ratio.

NVIDIA's product pages for GeForce and RTX workstation cards give a single "AI TOPS" figure: the
peak of the narrowest format with 2:4 sparsity (FP8 on Ada, FP4 on Blackwell). The catalogue
holds dense FP16/BF16 with FP32 accumulate, and the ratio between the two is fixed by the
architecture and the product line: sparsity doubles a rate, each halving of the format's width
doubles it, and GeForce cards run FP16 with FP32 accumulate at half the rate of FP16 accumulate
(workstation and data-centre cards at full rate). The whitepapers list both figures for the cards
they describe, so the ratio is read from them once and applied to the cards they do not list.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..precision import is_geforce
from ..units import missing

#: The product lines a rule distinguishes: GeForce cards, and every other (TITAN, workstation and
#: data-centre cards, which run FP32 accumulate at full rate).
GEFORCE, PRO = "GeForce", "pro"

ADA_WHITEPAPER = "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
RTX_BLACKWELL_WHITEPAPER = (
    "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf"
)
RTX_PRO_BLACKWELL_WHITEPAPER = (
    "https://www.nvidia.com/content/dam/en-zz/Solutions/design-visualization/quadro-product-literature/"
    "NVIDIA-RTX-Blackwell-PRO-GPU-Architecture-v1.0.pdf"
)


@dataclass(frozen=True)
class Rule:
    """How one architecture's product line turns its AI TOPS headline into dense figures."""

    architecture: str
    line: str  # GEFORCE or PRO
    headline: str  # what the AI TOPS figure is
    fp16_divisor: float  # AI TOPS / this = dense FP16 (and BF16) TFLOPS with FP32 accumulate
    source_url: str
    evidence: str  # the whitepaper's figures the ratio is read from

    def dense(self, ai_tops: float) -> dict[str, float]:
        """The dense figures that follow from ``ai_tops``: FP16/BF16 with FP32 accumulate, TF32 at
        half of it, FP8 and INT8 at twice it (FP32 accumulate), FP4 at four times (Blackwell)."""
        fp16 = ai_tops / self.fp16_divisor
        out = {
            "fp16_tensor_tflops": fp16,
            "bf16_tensor_tflops": fp16,
            "tf32_tensor_tflops": fp16 / 2,
            "fp8_tensor_tflops": fp16 * 2,
            "int8_tensor_tops": fp16 * 2 if self.line == PRO else fp16 * 4,
        }
        if self.architecture == "Blackwell":
            out["fp4_tensor_tflops"] = ai_tops / 2
        return out


RULES: tuple[Rule, ...] = (
    Rule(
        "Ada Lovelace",
        GEFORCE,
        "FP8 with 2:4 sparsity and FP16 accumulate",
        8,
        ADA_WHITEPAPER,
        "Appendix A, GeForce RTX 4090: peak FP8 tensor TFLOPS with FP16 accumulate 660.6/1321.2 "
        "(dense/sparse), peak FP16 tensor TFLOPS with FP32 accumulate 165.2: 1321.2 / 165.2 = 8",
    ),
    Rule(
        "Ada Lovelace",
        PRO,
        "FP8 with 2:4 sparsity",
        4,
        RTX_PRO_BLACKWELL_WHITEPAPER,
        "RTX 6000 Ada: 1457 AI TOPS on its product page (FP8 with sparsity), BF16 with FP32 accumulate "
        "364 dense in Table 4's RTX 6000 Ada column: 1457 / 364 = 4",
    ),
    Rule(
        "Blackwell",
        GEFORCE,
        "FP4 with 2:4 sparsity",
        16,
        RTX_BLACKWELL_WHITEPAPER,
        "Table 3, GeForce RTX 5090: peak FP4 tensor TFLOPS 1676/3352 (dense/sparse; 3352 AI TOPS), peak "
        "FP16 tensor TFLOPS with FP32 accumulate 209.5 dense: 3352 / 209.5 = 16",
    ),
    Rule(
        "Blackwell",
        PRO,
        "FP4 with 2:4 sparsity",
        8,
        RTX_PRO_BLACKWELL_WHITEPAPER,
        "Appendix A, RTX PRO 6000 Blackwell: 4030.4 AI TOPS (FP4 sparse), BF16 tensor with FP32 "
        "accumulate 503.8 dense: 4030.4 / 503.8 = 8",
    ),
)


def product_line(row) -> str:
    """GEFORCE for a GeForce card (by its name), PRO for every other (TITAN, workstation, data centre)."""
    return GEFORCE if is_geforce(row) else PRO


def rule_for(row) -> Rule | None:
    """The rule for a catalogue row's architecture and product line (None where none is stated)."""
    line = product_line(row)
    return next((r for r in RULES if r.architecture == row["architecture"] and r.line == line), None)


def check(row, tolerance: float = 0.03) -> list[tuple[str, str]]:
    """(column, message) pairs where a row's ``ai_tops`` and its dense FP16 figure disagree with its
    rule, or where it states AI TOPS for an architecture no rule covers."""
    ai = row.get("ai_tops")
    if missing(ai):
        return []
    rule = rule_for(row)
    if rule is None:
        lines = ", ".join(sorted({f"{r.architecture} {r.line}" for r in RULES}))
        return [
            ("ai_tops", f"no rule turns {row['architecture']} AI TOPS into dense figures (rules: {lines})")
        ]
    fp16 = row.get("fp16_tensor_tflops")
    expected = rule.dense(ai)["fp16_tensor_tflops"]
    if fp16 is None or fp16 != fp16:
        return [
            ("fp16_tensor_tflops", f"is empty; AI TOPS {ai:g} / {rule.fp16_divisor:g} gives {expected:.1f}")
        ]
    if abs(fp16 - expected) > tolerance * expected:
        return [
            (
                "fp16_tensor_tflops",
                f"{fp16:g} disagrees with AI TOPS {ai:g} / {rule.fp16_divisor:g} = {expected:.1f} "
                f"({rule.architecture} {rule.line}: {rule.headline}); is one of them sparse?",
            )
        ]
    return []

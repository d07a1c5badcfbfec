"""The sections of docs/accuracy/llm.md, each a function that returns its Markdown lines.

``benchmarks/llm_accuracy.py`` grades the model, measures the benchmark decoder and joins these in
the page's order; a section that grades the model with a part changed (:mod:`.variants`) runs that
variant itself.
"""

from .ablations import ablations_section
from .baselines import baselines_section
from .decoder_memory import decoder_memory_section
from .engines import engines_section
from .intro import intro_lines
from .pairs import largest_errors_section, misses_section, seed_pairs_section, summary_section
from .pipeline import several_gpus_section
from .ratios import decode_ratio_section, prefill_ratio_section
from .screened import screened_section
from .serving import serving_section

__all__ = [
    "ablations_section",
    "baselines_section",
    "decode_ratio_section",
    "decoder_memory_section",
    "engines_section",
    "intro_lines",
    "largest_errors_section",
    "misses_section",
    "prefill_ratio_section",
    "screened_section",
    "seed_pairs_section",
    "serving_section",
    "several_gpus_section",
    "summary_section",
]

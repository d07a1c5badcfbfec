"""The sections of docs/accuracy/perfmodel.md, each a function that returns its Markdown lines.

``benchmarks/perfmodel_accuracy.py`` grades the model and joins these in the page's order; a
section that grades a variant of the model (a term scanned, a rate left out) runs that variant
itself.
"""

from .current import current_pairs, current_section, stack_section
from .leave_out import leave_out_sections
from .overview import DIAGNOSIS, family_section, key_pairs_section, largest_errors, overview
from .rates import bandwidth_section, sustained_section
from .ratios import gpu_factor_section, ratio_section
from .scaling import several_gpus_section, systems_section
from .software import software_section, tf32_section, update_section
from .terms import host_section, issue_section, l2_section, sm_bytes_section

__all__ = [
    "DIAGNOSIS",
    "bandwidth_section",
    "current_pairs",
    "current_section",
    "family_section",
    "gpu_factor_section",
    "host_section",
    "issue_section",
    "key_pairs_section",
    "l2_section",
    "largest_errors",
    "leave_out_sections",
    "overview",
    "ratio_section",
    "several_gpus_section",
    "sm_bytes_section",
    "software_section",
    "stack_section",
    "sustained_section",
    "systems_section",
    "tf32_section",
    "update_section",
]

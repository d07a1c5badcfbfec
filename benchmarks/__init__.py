"""How far to trust gpukit: the scripts that grade its models against published measurements, time
its answers and measure the attached device, each writing its page under ``docs/accuracy/``.

Each page has one entry, run from the repository's root as a module::

    .venv/bin/python -m benchmarks.perfmodel_accuracy --write docs/accuracy/perfmodel.md
    .venv/bin/python -m benchmarks.llm_accuracy --write docs/accuracy/llm.md

``make accuracy`` runs the ones whose output ``gpukit`` reads at run time. The page modules
(``llm_page``, ``perfmodel_page``, ``memory_page``) hold the sections of the longer pages, and
``_report`` what every page shares.
"""

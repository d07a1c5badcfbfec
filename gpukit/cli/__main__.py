"""``python -m gpukit.cli``: the ``gpukit`` command, as ``python -m gpukit`` is."""

import sys

from . import main

sys.exit(main())

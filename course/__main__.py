"""``python3 -m course lab`` (Windows: ``py -m course lab``): see :mod:`course.launcher`."""

import sys

from course.launcher import main

sys.exit(main())

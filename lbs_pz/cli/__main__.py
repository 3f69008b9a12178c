import sys

from lbs_pz.cli import main

sys.exit(main())

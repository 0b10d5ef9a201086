"""``python -m sitemap_reader.options --markdown | --keywords | --write``."""

import sys

from sitemap_reader.options.derive import main

raise SystemExit(main(sys.argv[1:]))

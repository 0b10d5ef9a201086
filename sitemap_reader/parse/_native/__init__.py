"""The compiled parser extension (``_expatcore``, built from ``_expatcore.c`` by
``hatch_build.py`` when a compiler is found); :mod:`sitemap_reader.parse.native` loads it."""

"""The example's spiders: ``demo`` (the mixin) and ``plain`` (the add-on)."""

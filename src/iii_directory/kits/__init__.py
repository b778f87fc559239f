"""kits."""

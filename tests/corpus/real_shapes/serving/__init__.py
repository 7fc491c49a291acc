"""A small serving worker split over modules (cross-module call chains)."""

"""Suite-wide settings."""

from hypothesis import settings

# No per-example deadline: on a loaded 2-core CI machine a slow example is noise, not a failure. The property
# tests check results, never time.
settings.register_profile("sacbot", deadline=None)
settings.load_profile("sacbot")

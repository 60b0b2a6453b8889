"""Development settings: the README's run command uses these."""
from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DEBUG", default=True)

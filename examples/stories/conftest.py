import sys
from pathlib import Path

# story_generator.py sits next to the tests, as an application module would.
sys.path.insert(0, str(Path(__file__).resolve().parent))

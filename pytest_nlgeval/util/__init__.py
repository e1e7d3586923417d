"""Small helpers every layer may use: atomic file writes (:mod:`.files`) and the named error of a missing
optional package (:mod:`.extras`)."""

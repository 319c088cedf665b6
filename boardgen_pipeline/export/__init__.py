"""What boardgen hands to the game: the calibrated tables as Godot resources,
written only under a green calibration (SPEC 11; ``godot``)."""

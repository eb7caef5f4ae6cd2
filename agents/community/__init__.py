"""Community bots (Necto, Element, ...) as league agents: their networks written here, their
weights read from the user's botpack folder as tensors only (never unpickled or executed)."""

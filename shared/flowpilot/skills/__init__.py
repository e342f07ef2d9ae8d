"""Skills: self-describing capabilities, their packs, registry, scorer, linter and handlers."""

# examples: filled in below

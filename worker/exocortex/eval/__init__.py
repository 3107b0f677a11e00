"""`exo eval`: models compared on your documents, extraction against a ground truth, the packet against plain retrieval."""

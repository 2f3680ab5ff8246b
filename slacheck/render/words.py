"""The words documents and the terminal put around figures: kept in ``slacheck.words`` (below
every stage, so a check can say a rule in the same words a document does); re-exported here."""

from slacheck.words import LABELS, NAMES, POINT_DEFINITIONS, Label, Name, PointDefinition, word

__all__ = ["LABELS", "NAMES", "POINT_DEFINITIONS", "Label", "Name", "PointDefinition", "word"]

"""The character data of the element being read, and the text cap applied to it.

Expat hands text over in pieces (``buffer_text`` joins runs up to its buffer size, but
entities, CDATA sections and chunk boundaries still split it), so the pieces are kept in
a list, emptied at every start and end tag, and joined only where a text is wanted: a
field's end tag. :class:`TextBuffer` is shared by the parts of the XML reader: the
element machine reads and empties it, the extension gatherer reads it, the scanner
empties it after the blank it feeds expat.
"""

from __future__ import annotations

from sitemap_reader.parse.bounds import BoundedExpat
from sitemap_reader.parse.entry import Sink


class TextBuffer:
    """The character data of the element being read (:attr:`pieces`, appended to by
    expat directly) and the cap on its length (:attr:`limit`)."""

    __slots__ = ("_overflow", "_sink", "limit", "pieces")

    def __init__(self, sink: Sink, bounded: BoundedExpat, *, max_text: int) -> None:
        self._sink = sink
        self.limit = max_text
        self._overflow = "x" * (max_text + 1)
        self.pieces: list[str] = []
        bounded.parser.CharacterDataHandler = self.pieces.append

    def text(self) -> str:
        """The gathered text, stripped; empty (and a problem) when it is over the cap.

        The cap applies to the raw text, as :meth:`bound` does, so the verdict is the
        same however the body was chunked."""
        text = "".join(self.pieces)
        if len(text) > self.limit:
            self._sink.problem("text-too-long", f"text longer than {self.limit} chars dropped")
            return ""
        return text.strip()

    def bound(self) -> None:
        # Called once per fed chunk, a memory guard: text past the cap is replaced by a
        # marker that is itself over the cap, so whoever joins it next rejects it exactly
        # as it would reject the whole text (however the body was chunked).
        pieces = self.pieces
        if len(pieces) > 1 and sum(map(len, pieces)) > self.limit:
            pieces[:] = [self._overflow]

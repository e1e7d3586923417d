"""A summary that misstates the figure of a long article, for the tests of how a failed fact check is explained:
the terminal's message, the results file and the HTML report must give the same reasons."""

from __future__ import annotations

import html
import re

_ARTICLE = (
    "The city council of Lindau approved a new bridge over the harbour on Tuesday. The bridge will cost 38 million "
    "euros. Construction starts on 19 May and should take two years. The old ferry will keep running until the "
    "bridge opens. Local shops welcomed the decision. The opposition said the money should go to schools instead. "
    "A public meeting is planned for June. The mayor, Anna Berg, called the vote historic. Traffic on the island is "
    "expected to double. Environmental groups asked for a study of the lake's fish. The council rejected that "
    "request. Tickets for the ferry will stay at 3 euros. The harbour will close for a week in August. "
)
#: long enough to be read in source windows by the embedded model
SOURCE = _ARTICLE * 3
#: the figure is wrong (83 million for 38 million); the second claim is right
OUTPUT = "The Lindau council approved a new 83 million euro bridge, and construction starts on 19 May."
#: what the explanation must say, whatever the scores: the claim proven wrong, the unsupported span with what the
#: source says, and the deciding window
MUST_SAY = (
    "proven wrong claim (",
    "unsupported: `83 million euro`: the source says 38 million euros",
    "best-supporting source window ",
)


def report_explanations(page: str) -> list[list[str]]:
    """The lines of every explanation list of a report page, unescaped."""
    return [
        [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", block, re.S)]
        for block in re.findall(r'<ul class="explanation">(.*?)</ul>', page, re.S)
    ]

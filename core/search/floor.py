"""A table's floor: how close questions its posts do not answer come to it, and the bar moved to it.

An embedding model's cosines sit higher or lower on different writing: questions in today's words
come less close to archaic prose than to a modern blog, answerable or not. The relevance bar
(core/answer/abstain.py) was calibrated on some writing; on a table where unrelated questions come
closer, or less close, the same thresholds answer too much, or decline too much. So each table's floor
is measured: how close, in the median over PROBES (everyday questions that no blog is about as a
whole), the nearest chunk comes to a probe, on the model's relevance scale. A profile whose bar records
the floor it was calibrated at (`bar.floor`) has its similarity thresholds moved by `floor_weight`
times the table's floor minus that one, the table's floor held within the floors calibrated on
(`Bar.on_floor`): a shift-only score normalisation against each table's own unrelated questions, like
the "Z-norm" of speaker verification without the scaling. `inkwell calibrate` chooses the weight
(core/evaluate/calibrate.py).

The nearest of a few chunks is nearer than the nearest of many only by chance, so a small blog's
nearest chunk says more about its size than its writing: measured as the nearest chunk itself, a
three-post blog's floor fell as low as King James prose's and its bar with it, and nonsense questions
were answered. So the nearest chunk is estimated, not found: per probe, the mean and spread of its
cosines with the chunks, and the expected best of that many normal draws (Blom's approximation), the
table counted as at least MIN_CHUNKS chunks. Up to SAMPLE chunk vectors are read, spread evenly over
the table.

The floor is measured once per table version in a process (48 probe vectors and one matrix product,
about 0.3 s on the demo table with the model loaded) and kept; `inkwell calibrate` measures it on every
table it calibrates on.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from core.embed import Embedder, normalise_rows
from core.embed.memo import query_vectors
from core.embed.scales import relevance_scale, rescale
from core.profiles import Bar, profile_for
from core.store import Store

# Everyday questions, one per topic, that no collection of writing answers as a whole: a blog about one
# of them (cooking, say) moves the median of 48 by little. Written for this; never taken from a question
# set used to calibrate or report.
PROBES: tuple[str, ...] = (
    "What is the capital of Canada?",
    "How do I change a flat tyre on a bicycle?",
    "What time zone is Tokyo in?",
    "How long should I boil an egg for a runny yolk?",
    "Who wrote Pride and Prejudice?",
    "How do I cancel my phone contract?",
    "What is the difference between a virus and a bacterium?",
    "Which planet has the most moons?",
    "How much does it cost to fly from London to New York?",
    "What are the rules of cricket?",
    "How do I unclog a kitchen sink?",
    "What is the best way to learn Spanish quickly?",
    "Can dogs eat grapes?",
    "How do solar panels generate electricity?",
    "What year did the Berlin Wall fall?",
    "How do I make sourdough starter?",
    "What is a good credit score?",
    "How many calories are in a banana?",
    "Who is the current president of France?",
    "How do I reset a forgotten email password?",
    "What causes thunder?",
    "Which football team has won the most Champions League titles?",
    "How do I file my taxes as a freelancer?",
    "What is the tallest building in the world?",
    "How do I get rid of mould in the bathroom?",
    "What does a blockchain do?",
    "How do I train for a marathon?",
    "What is the speed of light?",
    "Where can I watch the new Star Wars series?",
    "How do I write a cover letter for a job application?",
    "What are the symptoms of the flu?",
    "How do vaccines work?",
    "What is the population of Brazil?",
    "How do I repot a cactus?",
    "What is the plot of Hamlet?",
    "How do I install a printer driver on Windows?",
    "Why is the sky blue?",
    "How do I brew good coffee with a French press?",
    "What is inflation and why does it happen?",
    "How do I teach my cat to use a litter box?",
    "Which wine goes with salmon?",
    "How do I negotiate a higher salary?",
    "What is the recipe for pancakes?",
    "How far is the Moon from Earth?",
    "What is the best smartphone to buy this year?",
    "How do I remove a red wine stain from a carpet?",
    "When is the best time to visit Iceland?",
    "How do airplanes stay in the air?",
)

# A table with fewer chunks is measured as if it had this many (see the module docstring).
MIN_CHUNKS = 64
# Chunk vectors read to measure a floor (all of them in a smaller table).
SAMPLE = 4096

_floors: dict[tuple[str, str, int], float | None] = {}
_lock = threading.Lock()


def measure_floor(store: Store, embedder: Embedder, probes: Sequence[str] = PROBES) -> float | None:
    """The median over `probes` of the expected best cosine of a probe with a chunk of `store` (the
    table counted as at least MIN_CHUNKS chunks; see the module docstring), on the model's relevance
    scale; None when the table has no chunks."""
    rows, chunks = store.vector_sample(SAMPLE)
    if rows == 0 or not len(chunks) or not probes:
        return None
    vectors = query_vectors.embed(embedder, list(probes))
    cosines = normalise_rows(vectors) @ normalise_rows(chunks).T  # probes x chunks
    best = cosines.mean(axis=1) + cosines.std(axis=1) * expected_best(max(rows, MIN_CHUNKS))
    return rescale(float(np.median(best)), relevance_scale(embedder.model_id))


def expected_best(n: int) -> float:
    """The expected largest of `n` standard normal draws (Blom's approximation, within 0.01 from n = 2)."""
    if n < 2:
        return 0.0
    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


def table_floor(store: Store, embedder: Embedder) -> float | None:
    """`measure_floor` of the table as it is now, measured once per table version in this process."""
    table = store.chunks
    if table is None:
        return None
    key = (store.key, embedder.model_id, int(table.version))
    with _lock:
        if key in _floors:
            return _floors[key]
    floor = measure_floor(store, embedder)
    with _lock:
        _floors[key] = floor
    return floor


def bar_for_table(store: Store | None, embedder: Embedder) -> Bar:
    """The model's profile's bar, moved to the table's floor when the profile records the floor it was
    calibrated at (else as the profile gives it)."""
    bar = profile_for(embedder.model_id).bar
    if store is None or bar.floor is None:
        return bar
    return bar.on_floor(table_floor(store, embedder))

"""Calibration negatives for the answerability decision
(`iii_directory.search.ranking.answerability`):
seeded sentences about gardening, sport, pets, chores and holidays — domains no tool catalog
serves. They are deliberately NOT the domains the property tests use (cooking, weather small
talk, random letters: tests/unit/search/unrelated_requests.py), so the decision is checked on
sentences it was never fitted on."""

from __future__ import annotations

import random

SUBJECTS = ("my neighbour", "the kids", "our dog", "my sister", "the coach", "grandad",
            "the cat", "my flatmate", "our team", "the gardener", "my uncle", "the goalkeeper")
GARDEN = ("prune the roses before the first frost", "plant the tulip bulbs along the fence",
          "the tomatoes finally turned red", "repot the fern into a bigger clay pot",
          "the hedge needs trimming again", "mulch the vegetable beds with straw",
          "the slugs ate every lettuce", "sow the carrot seeds in shallow rows")
SPORT = ("scored a brilliant header in the last minute", "missed the penalty again",
         "ran a personal best at the park run", "the referee was hopeless on Saturday",
         "we lost three nil at home", "is training for a half marathon",
         "the batting collapse was painful to watch", "swam forty lengths before breakfast")
PETS = ("keeps chewing the sofa cushions", "learned to sit and give a paw",
        "hates the vacuum cleaner", "sleeps in the sunny spot by the window",
        "chased a squirrel up the oak tree", "needs a trim at the groomer's")
CHORES = ("fold the laundry and put it away", "hoover the stairs and the landing",
          "descale the kettle with vinegar", "clear out the gutters before autumn",
          "iron the shirts for the week", "defrost the freezer over the weekend")
HOLIDAYS = ("the hotel pool was freezing", "we got lost hiking above the lake",
            "the ferry crossing made everyone seasick", "the little bakery by the harbour was lovely",
            "we watched the sunset from the old castle walls", "the campsite flooded on the second night")
TEMPLATES = (
    "{subject} {sport}", "{subject} {pets}", "I really should {chores}", "remember when {holidays}",
    "this weekend I want to {garden}", "honestly {subject} {pets}", "{holidays}, what a trip",
    "did you hear that {subject} {sport}", "we need to {garden}", "{chores} before mum visits",
)


def chatter(rng: random.Random) -> str:
    return rng.choice(TEMPLATES).format(
        subject=rng.choice(SUBJECTS), sport=rng.choice(SPORT), pets=rng.choice(PETS),
        chores=rng.choice(CHORES), holidays=rng.choice(HOLIDAYS), garden=rng.choice(GARDEN))

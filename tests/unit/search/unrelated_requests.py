"""Seeded generators of requests that no tool catalog serves (issue 18): strings of random
letters, and sentences from two unrelated domains — cooking steps and weather small talk — built
from the word lists below (written for these tests). Weather small talk remarks on the weather;
it never asks for a forecast, which a catalog with a weather worker would serve."""

from __future__ import annotations

import random
import string

_VOWELS = "aeiouy"


def random_letters(rng: random.Random) -> str:
    """One to five 'words' of 3–12 random lowercase letters (sometimes capitalised)."""
    words = []
    for _ in range(rng.randint(1, 5)):
        word = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 12)))
        words.append(word.capitalize() if rng.random() < 0.2 else word)
    return " ".join(words)


COOK_VERBS = ("simmer", "whisk", "knead", "saute", "fold in", "chop", "dice", "marinate",
              "roast", "bake", "braise", "season", "grate", "peel", "caramelise", "blanch",
              "baste", "poach", "sear", "zest", "mince", "stir", "toast", "glaze", "drizzle",
              "sprinkle", "crush", "slice", "julienne", "deglaze")
INGREDIENTS = ("the onions", "two cloves of garlic", "the chicken thighs", "a cup of rice",
               "the butter", "three eggs", "the sourdough", "a handful of basil", "the carrots",
               "the pork shoulder", "fresh ginger", "the mushrooms", "the salmon fillet",
               "a pinch of saffron", "the potatoes", "the lemon", "some parmesan", "the dough",
               "the tomatoes", "the leeks", "a spoon of honey", "the chickpeas", "the shallots",
               "the brisket", "the almonds", "a splash of cream", "the aubergine", "the noodles")
COOK_MANNERS = ("gently", "over low heat", "in olive oil", "until golden", "for twenty minutes",
                "until soft and fragrant", "in a cast-iron pan", "with a wooden spoon",
                "until the edges crisp", "in the oven at 200 degrees", "with sea salt",
                "until it thickens", "in batches", "until tender", "with a little stock",
                "before serving", "on a baking tray", "until caramelised", "for the risotto",
                "for tonight's curry", "for the lasagne", "so the sauce does not split")
COOK_OPENERS = ("", "", "next, ", "then ", "carefully ", "meanwhile ", "once the water boils, ",
                "after resting the meat, ", "while the oven heats, ")


def cooking_step(rng: random.Random) -> str:
    opener = rng.choice(COOK_OPENERS)
    return f"{opener}{rng.choice(COOK_VERBS)} {rng.choice(INGREDIENTS)} {rng.choice(COOK_MANNERS)}"


WEATHER_ADJECTIVES = ("lovely", "miserable", "muggy", "crisp", "gloomy", "glorious", "chilly",
                      "blustery", "drizzly", "scorching", "balmy", "grey", "sticky", "bright")
WEATHER_TIMES = ("morning", "afternoon", "evening", "weekend", "spring", "summer", "autumn",
                 "day", "week")
WEATHER_THINGS = ("drizzle", "heatwave", "fog", "wind", "sunshine", "hail", "frost", "humidity",
                  "thunder", "snow", "cloud cover", "rain")
WEATHER_EVENTS = ("the barbecue", "the garden party", "our picnic", "the school run", "the match",
                  "my walk to the station", "the wedding", "the cricket", "the dog walk",
                  "my cycle home")
WEATHER_FEELINGS = ("my umbrella turned inside out", "the washing never dried",
                    "I had to wear two jumpers", "the cat refused to go outside",
                    "my socks got soaked", "the roses finally bloomed",
                    "we ate ice cream on the beach", "the bus was packed with wet coats",
                    "the garden looks like a swamp", "I forgot my sunglasses again")
WEATHER_TEMPLATES = (
    "{adj} {time} we're having, isn't it",
    "I hope the {thing} holds off until after {event}",
    "it was so {adj} this {time} that {feeling}",
    "can you believe how {adj} it is out there today",
    "the {thing} completely ruined {event}",
    "honestly this {adj} {thing} is getting to me",
    "what a {adj} {time}, {feeling}",
    "my gran always says a {adj} {time} means a long winter",
    "nothing beats a {adj} {time} with a cup of tea",
    "typical, the {thing} started right as {event} began",
)


def weather_small_talk(rng: random.Random) -> str:
    template = rng.choice(WEATHER_TEMPLATES)
    return template.format(adj=rng.choice(WEATHER_ADJECTIVES), time=rng.choice(WEATHER_TIMES),
                           thing=rng.choice(WEATHER_THINGS), event=rng.choice(WEATHER_EVENTS),
                           feeling=rng.choice(WEATHER_FEELINGS))


def unrelated_sentence(rng: random.Random) -> str:
    """A cooking step or a remark on the weather, half and half."""
    return cooking_step(rng) if rng.random() < 0.5 else weather_small_talk(rng)

"""Near-miss calibration negatives for the answerability fit (`fit_answerability.py`): seeded,
tool-like requests for services the eval catalog (`../shared/eval/catalog.json`) has no worker
for — smart-home devices, rides and bookings, food orders, media playback and recording,
printers and phones, trading and banking moves, fitness trackers, social networks. Unlike the
chatter (`calibration_chatter.py`) they ask for an action, often with a verb the catalog knows
(`book`, `post`, `record`, `open`, `send`), which is where the decision is hard. Used only over
the eval catalog: the held-out catalog has workers for some of these domains (a thermostat, a
warehouse), so there they would not be negatives. Not the property tests' generators."""

from __future__ import annotations

import random

REQUESTS = (
    # smart home
    "turn off the living room lights", "set the thermostat to 21 degrees",
    "lock the front door", "start the robot vacuum in the kitchen",
    "dim the bedroom lamp to 30 percent", "open the garage door",
    "close the blinds in the office", "switch the heating to eco mode",
    # rides, travel, tables
    "book a taxi to the airport for 6am", "reserve a table for four at an Italian restaurant",
    "book a flight to Lisbon next Friday", "check me in for flight BA 482",
    "rent a car in Porto for the weekend", "order a ride to the central station",
    "find a hotel room near the venue and book it", "buy two train tickets to Bristol",
    # food and shopping
    "order a large pepperoni pizza for delivery", "reorder my usual groceries from the supermarket",
    "get a flat white delivered to the office", "track my parcel from the online shop",
    # media, devices
    "play some jazz on the kitchen speaker", "skip to the next song",
    "record a voice memo on my phone", "take a photo with the webcam",
    "turn up the TV volume", "cast this video to the living room TV",
    "print the contract on the office printer", "scan the receipt with the phone camera",
    "pair my bluetooth headphones", "turn on do not disturb on my phone",
    "set an alarm on my phone for 6:30", "start a video call with grandma on the tablet",
    # money
    "buy ten shares of Apple at market price", "move 200 euros to my savings account",
    "check my credit score", "sell half of my bitcoin",
    # health and fitness
    "log 8,000 steps in my fitness tracker", "show how I slept last night from my watch",
    "book a physiotherapy session for next week", "refill my prescription at the pharmacy",
    # social networks
    "post a photo to my Instagram story", "like the latest post from NASA on X",
    "follow the new bakery account on TikTok", "share my run on Strava",
    # vehicles and places
    "unlock my car and start the air conditioning", "find a free parking spot near the stadium",
    "pay the road toll for my trip", "charge the electric car to 80 percent overnight",
)
PREFIXES = ("", "", "please ", "can you ", "I need to ", "could you ", "quickly ")
SUFFIXES = ("", "", "", " please", " right now", " for me", " before tonight")


def nearmiss(rng: random.Random) -> str:
    return rng.choice(PREFIXES) + rng.choice(REQUESTS) + rng.choice(SUFFIXES)

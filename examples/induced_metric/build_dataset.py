"""Build answers.jsonl: a small, synthetic labelled dataset for trying metric induction offline.

Everything here is constructed, not collected: 24 questions with a reference answer and a good answer
written for this example, and five answer variants per question built by fixed rules. The "helpfulness"
label (1-5) follows the rubric below, with seeded noise standing in for disagreement between raters.
It illustrates the workflow; it is not evidence about any real system or real raters.

Rubric used to assign the labels:
  5  correct, complete answer to the question (the written good answer)
  3  correct but curt (only its first sentence), or correct but padded with repeated filler
  2  answers the question but contradicts itself (a key sentence is negated next to the original)
  1  answers a different question, or declines to answer

    python examples/induced_metric/build_dataset.py   # rewrites answers.jsonl next to this file
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

QA = [
    (
        "How do I descale an electric kettle?",
        "Fill the kettle with equal parts water and white vinegar, boil it, and let it sit for an hour. Empty it and boil clean water twice to remove the taste.",
        "Mix water and white vinegar half and half, bring it to the boil and leave it for about an hour. Pour it out, then boil fresh water two times so the vinegar taste is gone. Citric acid works too if you dislike the smell.",
    ),
    (
        "Why does my bread not rise?",
        "The yeast may be dead or the dough too cold. Check the yeast's date, proof it in warm water with sugar, and let the dough rise somewhere warm.",
        "Usually the yeast is old or the dough is kept too cold. Test the yeast in warm water with a pinch of sugar; it should foam within ten minutes. Then let the dough rise in a warm, draught-free spot.",
    ),
    (
        "How often should I change my toothbrush?",
        "Replace your toothbrush every three to four months. Replace it sooner if the bristles are frayed or after you have been ill.",
        "Dentists recommend a new toothbrush every three to four months. Change it earlier when the bristles look frayed, and after an illness. Worn bristles clean much less well.",
    ),
    (
        "How can I make my phone battery last longer?",
        "Lower the screen brightness and turn off background app refresh. Avoid extreme heat and keep the charge between 20 and 80 percent when you can.",
        "Turn the screen brightness down and disable background refresh for apps you rarely use. Keep the phone out of heat. Charging between about 20 and 80 percent also slows battery wear.",
    ),
    (
        "What is the best way to store fresh herbs?",
        "Treat soft herbs like flowers: stand them in a glass of water in the fridge. Wrap hardy herbs such as rosemary in a damp paper towel and keep them in a bag.",
        "Put soft herbs such as parsley and basil in a glass of water like a bouquet; parsley goes in the fridge, basil stays at room temperature. Wrap woody herbs like thyme and rosemary in a damp paper towel inside a bag in the fridge.",
    ),
    (
        "How do I remove a red wine stain from a carpet?",
        "Blot the stain, do not rub it. Apply a mix of dish soap, white vinegar and warm water, blot again, and rinse with cold water.",
        "Blot up as much wine as you can with a clean cloth without rubbing. Dab on a mix of a spoon of dish soap, a spoon of white vinegar and two cups of warm water, blot again, then rinse with cold water and blot dry.",
    ),
    (
        "How long should I boil an egg for a soft yolk?",
        "Lower the egg into boiling water and cook it for six minutes. Then cool it in cold water for a minute before peeling.",
        "Put the egg into water that is already boiling and cook it for about six minutes for a soft, runny yolk. Move it to cold water for a minute so it stops cooking and peels easily.",
    ),
    (
        "How do I reset my home Wi-Fi router?",
        "Press and hold the reset button on the back for about ten seconds until the lights flash. The router then returns to factory settings and you set it up again.",
        "Find the small reset button on the back of the router and hold it for around ten seconds, until the lights blink. That restores factory settings, so you need to set the network name and password again afterwards.",
    ),
    (
        "What should I do if my car battery is dead?",
        "Jump-start it with jumper cables and another car, connecting red to the positive terminals and black to a metal ground. If it dies again, have the battery tested.",
        "Use jumper cables and a second car: red clamps on both positive terminals, black on the good battery's negative and on bare metal of your car. Start the good car, then yours. If the battery keeps dying, get it tested or replaced.",
    ),
    (
        "How can I fall asleep faster?",
        "Keep a regular bedtime and avoid screens for an hour before bed. Keep the bedroom cool and dark, and avoid caffeine after midday.",
        "Go to bed at the same time every night and put screens away an hour before. A cool, dark, quiet room helps, and so does skipping caffeine after lunch.",
    ),
    (
        "How do I unclog a bathroom sink?",
        "Remove and clean the pop-up stopper, then use a plunger. If that fails, pour baking soda followed by vinegar, wait, and flush with hot water.",
        "Pull out the stopper and clear the hair from it, then plunge the drain. If it is still slow, pour in half a cup of baking soda and a cup of vinegar, wait fifteen minutes and flush with hot water.",
    ),
    (
        "Why are my houseplant's leaves turning yellow?",
        "Yellow leaves usually mean overwatering. Let the top of the soil dry out between waterings and make sure the pot drains.",
        "Most often the plant gets too much water. Let the top few centimetres of soil dry before watering again and check that the pot has drainage holes. Too little light can also cause yellowing.",
    ),
    (
        "How do I clean a cast iron pan?",
        "Rinse it with hot water and scrub with a brush, using a little soap if needed. Dry it completely on the stove and rub in a thin layer of oil.",
        "Wash it with hot water and a stiff brush; a little soap is fine. Dry it straight away over low heat and wipe a thin film of oil over the surface so it does not rust.",
    ),
    (
        "How much water should I drink a day?",
        "Most adults need about two to three litres of fluid a day, including water in food. Drink more when it is hot or when you exercise.",
        "Roughly two to three litres of fluid a day suits most adults, and food supplies part of it. Increase it in hot weather and when you exercise; pale urine is a good sign you drink enough.",
    ),
    (
        "How do I make rice less sticky?",
        "Rinse the rice in cold water until it runs clear to remove surface starch. Use the right amount of water and let it rest covered after cooking.",
        "Wash the rice in cold water until the water is clear, which removes the loose starch. Measure the water carefully, and let the cooked rice rest with the lid on for ten minutes before fluffing it.",
    ),
    (
        "What is the safest way to thaw frozen chicken?",
        "Thaw it in the fridge overnight. For a faster option, seal it in a bag and submerge it in cold water, changing the water every thirty minutes.",
        "The fridge is safest: leave it overnight on a plate. If you are in a hurry, put it in a sealed bag in cold water and change the water every half hour. Never thaw it on the counter.",
    ),
    (
        "How do I stop my glasses from fogging up?",
        "Wash the lenses with a drop of dish soap and let them air dry to leave a thin film. Make sure a face mask fits tightly over the nose.",
        "Clean the lenses with a drop of dish soap and let them dry without wiping, which leaves an anti-fog film. If you wear a mask, pinch it tight over the bridge of your nose so your breath goes down.",
    ),
    (
        "How can I save money on groceries?",
        "Plan meals for the week and shop with a list. Buy store brands, compare unit prices, and avoid shopping when hungry.",
        "Plan the week's meals and stick to a shopping list. Store brands and comparing the price per kilo save a lot, and shopping after a meal stops impulse buys.",
    ),
    (
        "How do I get rid of fruit flies?",
        "Remove overripe fruit and take out the trash. Set a trap of cider vinegar with a drop of dish soap in a small bowl.",
        "Throw out overripe fruit and empty the bin. Then fill a small bowl with cider vinegar and a drop of dish soap; the flies are drawn in and drown. Clean the sink drain too.",
    ),
    (
        "How do I sharpen a kitchen knife?",
        "Use a whetstone soaked in water and hold the blade at about fifteen to twenty degrees. Draw it across the stone several times on each side, then hone it.",
        "Soak a whetstone, hold the knife at roughly fifteen to twenty degrees and slide the edge across the stone, the same number of strokes on each side. Finish with a honing steel to straighten the edge.",
    ),
    (
        "Why does my laptop get so hot?",
        "Dust in the vents and fan blocks the airflow. Clean the vents with compressed air and use the laptop on a hard, flat surface.",
        "Usually dust has clogged the vents and fan, so air cannot flow. Blow the vents out with compressed air and keep the laptop on a hard surface rather than a bed or cushion. Heavy programs add heat too.",
    ),
    (
        "How do I remove rust from tools?",
        "Soak the tools in white vinegar overnight, then scrub the rust off with steel wool. Dry them well and apply a light coat of oil.",
        "Leave the tools in white vinegar overnight, scrub the loosened rust away with steel wool or a wire brush, rinse and dry them, and wipe on a little oil to stop new rust.",
    ),
    (
        "How can I keep cut avocado from browning?",
        "Brush the cut surface with lemon or lime juice and wrap it tightly in plastic film. Store it in the fridge with the stone left in.",
        "Squeeze lemon or lime juice over the cut side, press cling film directly onto the flesh and keep it in the fridge, leaving the stone in. This slows the browning for a day or so.",
    ),
    (
        "How do I choose the right running shoes?",
        "Get your gait checked at a running shop and try shoes on in the afternoon when feet are larger. Leave a thumb's width of space in front of the toes.",
        "A running shop can watch your gait and suggest cushioned or stability shoes. Try them on later in the day, when your feet have swollen a little, and keep about a thumb's width of room in front of your toes.",
    ),
]

FILLER = ["This is a very common question.", "Many people wonder about this.", "It is good to keep this in mind."]
REFUSALS = [
    "I'm not sure about that, you could try searching online.",
    "Sorry, I can't help with that question.",
    "That depends on many things, so it is hard to say.",
]
_AUX = re.compile(r"\b(is|are|was|were|can|will|should|does|do|has|have|keeps|goes|helps)\b")
_VERB = re.compile(r"^(\w+)")


def sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.!?])\s+", text.strip())


def contradict(answer: str, rng: random.Random) -> str:
    sents = sentences(answer)
    i = rng.randrange(len(sents))
    s = sents[i]
    m = _AUX.search(s)
    if m:
        neg = s[: m.end()] + " not" + s[m.end() :]
    else:
        neg = "Do not " + s[0].lower() + s[1:]
    return " ".join(sents[: i + 1] + ["Actually, " + neg[0].lower() + neg[1:]] + sents[i + 1 :])


def main() -> None:
    rng = random.Random(20261202)
    rows = []
    for q_index, (question, reference, good) in enumerate(QA):
        other = QA[(q_index + 7) % len(QA)][2]
        variants = [
            ("good", good, 5),
            ("curt", sentences(good)[0], 3),
            (
                "padded",
                " ".join([sentences(good)[0]] + [rng.choice(FILLER) for _ in range(3)] + sentences(good)[1:2]),
                3,
            ),
            ("contradictory", contradict(good, rng), 2),
            ("off_topic" if q_index % 2 else "refusal", other if q_index % 2 else rng.choice(REFUSALS), 1),
        ]
        for kind, answer, label in variants:
            # rater disagreement: about one label in six moves one step up or down
            if rng.random() < 1 / 6:
                label = min(5, max(1, label + rng.choice((-1, 1))))
            rows.append(
                {
                    "id": f"q{q_index:02d}-{kind}",
                    "input": question,
                    "output": answer,
                    "references": [reference],
                    "helpfulness": label,
                    "variant": kind,
                }
            )
    out = Path(__file__).with_name("answers.jsonl")
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} rows to {out}")


if __name__ == "__main__":
    main()

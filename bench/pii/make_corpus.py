#!/usr/bin/env python3
"""Writes tests/fixtures/pii/interviews.jsonl: 60 synthetic customer-research interviews
whose personal values, and the ordinary words that must stay, are marked inline.

    pip install -r bench/pii/requirements.txt
    python3 bench/pii/make_corpus.py            # writes the fixture
    python3 bench/pii/make_corpus.py --stdout   # prints it instead
    python3 bench/pii/make_corpus.py --seed 7   # prints another draw (held out: the
                                                # detector was never tuned on it)

The output is the same on every run (fixed seed, pinned Faker). Marks are
`⟦KIND.form:value⟧` (U+27E6, U+27E7) with KIND one of PERSON, EMAIL, PHONE, CARD, IBAN, IP,
URL, or WORD for a word that is not personal and must not be replaced. Names come from Faker
(en_US, en_GB, de_DE, fr_FR, es_ES, pt_BR; hi_IN for Devanagari, en_IN for romanised Indian
names), from RARE below (cultures those locales lack), and from short hand lists (nicknames,
Japanese names said with -san). All values are fictitious; every card passes Luhn and every
IBAN its mod-97 check.
"""

import ipaddress
import json
import random
import re
import sys
import unicodedata
from pathlib import Path

from faker import Faker

SEED = 20261201
INTERVIEWS = 60
OPEN, CLOSE = "\u27e6", "\u27e7"
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "pii" / "interviews.jsonl"

# Interviews per locale, in the order they are written.
LOCALES = (
    ["en_US"] * 11 + ["en_GB"] * 9 + ["de_DE"] * 9 + ["fr_FR"] * 8 + ["es_ES"] * 8 + ["pt_BR"] * 8 + ["hi_IN"] * 7
)
LANGUAGE = {"en_US": "en", "en_GB": "en", "de_DE": "de", "fr_FR": "fr", "es_ES": "es", "pt_BR": "pt", "hi_IN": "en"}

# Real-world names from cultures Faker's locales above lack: (full, called, by surname, gender).
RARE = [
    # Yoruba
    ("Oluwaseun Adeyemi", "Oluwaseun", "Adeyemi", "m"),
    ("Adebayo Ogunleye", "Adebayo", "Ogunleye", "m"),
    ("Folasade Adeleke", "Folasade", "Adeleke", "f"),
    ("Titilayo Bankole", "Titilayo", "Bankole", "f"),
    ("Babatunde Olatunji", "Babatunde", "Olatunji", "m"),
    ("Temitope Ogundipe", "Temitope", "Ogundipe", "f"),
    ("Yetunde Akinola", "Yetunde", "Akinola", "f"),
    # Igbo
    ("Chukwuemeka Okonkwo", "Chukwuemeka", "Okonkwo", "m"),
    ("Ngozi Eze", "Ngozi", "Eze", "f"),
    ("Chidinma Nwosu", "Chidinma", "Nwosu", "f"),
    ("Obinna Okafor", "Obinna", "Okafor", "m"),
    ("Ifeoma Nnamdi", "Ifeoma", "Nnamdi", "f"),
    ("Chinonso Obi", "Chinonso", "Obi", "m"),
    ("Nkechi Anyanwu", "Nkechi", "Anyanwu", "f"),
    # Polish
    ("Grzegorz Brzęczyszczykiewicz", "Grzegorz", "Brzęczyszczykiewicz", "m"),
    ("Małgorzata Wójcik", "Małgorzata", "Wójcik", "f"),
    ("Przemysław Szczepański", "Przemysław", "Szczepański", "m"),
    ("Agnieszka Włodarczyk", "Agnieszka", "Włodarczyk", "f"),
    ("Wojciech Jędrzejczak", "Wojciech", "Jędrzejczak", "m"),
    ("Bożena Kowalczyk", "Bożena", "Kowalczyk", "f"),
    ("Zbigniew Krzyżanowski", "Zbigniew", "Krzyżanowski", "m"),
    # Irish
    ("Siobhán Ní Bhriain", "Siobhán", "Ní Bhriain", "f"),
    ("Pádraig Ó Dhomhnaill", "Pádraig", "Ó Dhomhnaill", "m"),
    ("Aoife Nic Giolla Phádraig", "Aoife", "Nic Giolla Phádraig", "f"),
    ("Caoimhe Ní Fhlannagáin", "Caoimhe", "Ní Fhlannagáin", "f"),
    ("Tadhg Mac Cárthaigh", "Tadhg", "Mac Cárthaigh", "m"),
    ("Oisín Ó Conaill", "Oisín", "Ó Conaill", "m"),
    ("Ruairí Ó Floinn", "Ruairí", "Ó Floinn", "m"),
    # Vietnamese (family name first; called by the last name)
    ("Nguyễn Thị Thu Hà", "Thu Hà", "Nguyễn", "f"),
    ("Trần Văn Minh", "Minh", "Trần", "m"),
    ("Phạm Quang Huy", "Huy", "Phạm", "m"),
    ("Lê Thị Bích Ngọc", "Ngọc", "Lê", "f"),
    ("Võ Thanh Tùng", "Tùng", "Võ", "m"),
    ("Đặng Hoài Nam", "Nam", "Đặng", "m"),
    ("Huỳnh Mỹ Linh", "Linh", "Huỳnh", "f"),
    # Māori
    ("Aroha Te Rangi", "Aroha", "Te Rangi", "f"),
    ("Wiremu Ngata", "Wiremu", "Ngata", "m"),
    ("Mereana Parata", "Mereana", "Parata", "f"),
    ("Tāne Waititi", "Tāne", "Waititi", "m"),
    ("Hēmi Te Awa", "Hēmi", "Te Awa", "m"),
    ("Kahurangi Tawhiri", "Kahurangi", "Tawhiri", "f"),
    ("Rāwiri Horomona", "Rāwiri", "Horomona", "m"),
    # Icelandic
    ("Guðrún Sigurðardóttir", "Guðrún", "Sigurðardóttir", "f"),
    ("Þórður Ásgeirsson", "Þórður", "Ásgeirsson", "m"),
    ("Sigríður Þorsteinsdóttir", "Sigríður", "Þorsteinsdóttir", "f"),
    ("Hrafnhildur Jónsdóttir", "Hrafnhildur", "Jónsdóttir", "f"),
    ("Eiríkur Ólafsson", "Eiríkur", "Ólafsson", "m"),
    ("Ragnheiður Gunnarsdóttir", "Ragnheiður", "Gunnarsdóttir", "f"),
    ("Snæbjörn Hallgrímsson", "Snæbjörn", "Hallgrímsson", "m"),
    # Georgian
    ("Nino Beridze", "Nino", "Beridze", "f"),
    ("Giorgi Kapanadze", "Giorgi", "Kapanadze", "m"),
    ("Tamar Lomidze", "Tamar", "Lomidze", "f"),
    ("Levan Chkheidze", "Levan", "Chkheidze", "m"),
    ("Ketevan Tsiklauri", "Ketevan", "Tsiklauri", "f"),
    ("Davit Gelashvili", "Davit", "Gelashvili", "m"),
    ("Mzia Abashidze", "Mzia", "Abashidze", "f"),
    # Tamil
    ("Thiruvalluvan Murugesan", "Thiruvalluvan", "Murugesan", "m"),
    ("Kayalvizhi Ramasamy", "Kayalvizhi", "Ramasamy", "f"),
    ("Senthil Kumaran", "Senthil", "Kumaran", "m"),
    ("Anbarasi Palanisamy", "Anbarasi", "Palanisamy", "f"),
    ("Ilakkiya Subramaniam", "Ilakkiya", "Subramaniam", "f"),
    ("Elangovan Sivakumar", "Elangovan", "Sivakumar", "m"),
    ("Tamilselvi Arumugam", "Tamilselvi", "Arumugam", "f"),
    # Filipino
    ("Liwayway Dimaculangan", "Liwayway", "Dimaculangan", "f"),
    ("Rizalino Macaraeg", "Rizalino", "Macaraeg", "m"),
    ("Ligaya Bautista", "Ligaya", "Bautista", "f"),
    ("Dalisay Pangilinan", "Dalisay", "Pangilinan", "f"),
    ("Bayani Villanueva", "Bayani", "Villanueva", "m"),
    ("Maricel Dimaano", "Maricel", "Dimaano", "f"),
    ("Marites Lagdameo", "Marites", "Lagdameo", "f"),
    # Dutch and Flemish, with particles
    ("Joost den Teuling", "Joost", "den Teuling", "m"),
    ("Femke van der Wiel", "Femke", "van der Wiel", "f"),
    ("Sanne ter Horst", "Sanne", "ter Horst", "f"),
    ("Bram van 't Hek", "Bram", "van 't Hek", "m"),
    ("Maarten in 't Veld", "Maarten", "in 't Veld", "m"),
    ("Lieke van den Akker", "Lieke", "van den Akker", "f"),
    ("Thijs op de Beeck", "Thijs", "op de Beeck", "m"),
    # Others
    ("Angharad Llewelyn", "Angharad", "Llewelyn", "f"),
    ("Gruffudd ap Rhys", "Gruffudd", "ap Rhys", "m"),
    ("Thandeka Dlamini", "Thandeka", "Dlamini", "f"),
    ("Kwabena Asante", "Kwabena", "Asante", "m"),
    ("Ama Serwaa Boateng", "Ama", "Boateng", "f"),
    ("Szilárd Gyöngyösi", "Szilárd", "Gyöngyösi", "m"),
    ("Řehoř Kříž", "Řehoř", "Kříž", "m"),
    ("Gökçe Yıldırım", "Gökçe", "Yıldırım", "f"),
    ("Väinö Äijälä", "Väinö", "Äijälä", "m"),
    ("Iñaki Etxeberria", "Iñaki", "Etxeberria", "m"),
    ("Amaia Goikoetxea", "Amaia", "Goikoetxea", "f"),
    ("Abdirahman Warsame", "Abdirahman", "Warsame", "m"),
    ("Wanjiru Kamau", "Wanjiru", "Kamau", "f"),
    ("Tigist Haile", "Tigist", "Haile", "f"),
    ("Bolormaa Enkhbayar", "Bolormaa", "Enkhbayar", "f"),
    ("Rūta Žemaitytė", "Rūta", "Žemaitytė", "f"),
    ("Līga Bērziņa", "Līga", "Bērziņa", "f"),
]

# Given names with the short forms colleagues use: (given, nickname, gender).
NICKNAMES = {
    "en": [
        ("Alexander", "Alex", "m"), ("Robert", "Bob", "m"), ("William", "Bill", "m"), ("Elizabeth", "Liz", "f"),
        ("Katherine", "Kate", "f"), ("Jennifer", "Jen", "f"), ("Michael", "Mike", "m"), ("Richard", "Rich", "m"),
        ("Margaret", "Peggy", "f"), ("Samantha", "Sam", "f"), ("Jonathan", "Jon", "m"), ("Patricia", "Trish", "f"),
        ("Rebecca", "Becky", "f"), ("Nicholas", "Nick", "m"), ("Anthony", "Tony", "m"), ("Edward", "Ted", "m"),
    ],
    "de": [
        ("Katharina", "Kathi", "f"), ("Johannes", "Hannes", "m"), ("Wolfgang", "Wolfi", "m"), ("Franziska", "Franzi", "f"),
        ("Stefanie", "Steffi", "f"), ("Matthias", "Matze", "m"), ("Andreas", "Andi", "m"), ("Susanne", "Susi", "f"),
        ("Maximilian", "Max", "m"), ("Josef", "Sepp", "m"), ("Elisabeth", "Lisi", "f"), ("Christoph", "Stoffel", "m"),
    ],
    "fr": [
        ("Frédéric", "Fred", "m"), ("Nicolas", "Nico", "m"), ("Stéphanie", "Steph", "f"), ("Sébastien", "Seb", "m"),
        ("Emmanuel", "Manu", "m"), ("Catherine", "Cathy", "f"), ("Florence", "Flo", "f"), ("Benjamin", "Ben", "m"),
        ("Maxime", "Max", "m"), ("Virginie", "Virgi", "f"),
    ],
    "es": [
        ("Francisco", "Paco", "m"), ("José", "Pepe", "m"), ("Guadalupe", "Lupe", "f"), ("Ignacio", "Nacho", "m"),
        ("Dolores", "Lola", "f"), ("Enrique", "Quique", "m"), ("Manuel", "Manolo", "m"), ("Rosario", "Charo", "f"),
        ("Mercedes", "Merche", "f"), ("Concepción", "Concha", "f"),
    ],
    "pt": [
        ("Francisco", "Chico", "m"), ("José", "Zé", "m"), ("Eduardo", "Dudu", "m"), ("Fernanda", "Nanda", "f"),
        ("Gabriela", "Gabi", "f"), ("Rafael", "Rafa", "m"), ("Guilherme", "Gui", "m"), ("Beatriz", "Bia", "f"),
        ("Roberto", "Beto", "m"), ("Carolina", "Carol", "f"),
    ],
    "hi": [
        ("Srinivas", "Srini", "m"), ("Venkatesh", "Venky", "m"), ("Subramanian", "Subbu", "m"), ("Rajesh", "Raju", "m"),
        ("Balasubramanian", "Balu", "m"), ("Priyanka", "Pinky", "f"), ("Lakshmi", "Lachu", "f"), ("Jagdish", "Jaggu", "m"),
    ],
}

# Japanese colleagues, addressed with -san in every language.
JAPANESE = [
    ("Kenji", "Nishimura", "m"), ("Yui", "Tanaka", "f"), ("Haruto", "Watanabe", "m"), ("Aiko", "Kobayashi", "f"),
    ("Sora", "Yamamoto", "m"), ("Takeshi", "Inoue", "m"), ("Mei", "Nakamura", "f"), ("Ren", "Takahashi", "m"),
    ("Hana", "Sato", "f"), ("Daichi", "Suzuki", "m"),
]

# Ordinary words that must stay.
OWN_PRODUCTS = ["Ledgerly", "Brightdesk", "Tallybook", "Pipewise", "Quillo", "Juniper", "Olive", "Marlowe", "Wren",
                "Iris", "Clara", "Otto", "Beacon", "Fennel"]
TOOLS = ["Jira", "Notion", "Slack", "Salesforce", "HubSpot", "Zendesk", "Trello", "Asana", "Marvin", "Excel", "Xero",
         "QuickBooks", "Pipedrive", "Intercom", "Freshdesk", "Airtable", "Miro", "Dovetail", "Basecamp"]
TOOLS_BY_LANGUAGE = {"de": ["DATEV", "Lexware", "sevDesk"], "fr": ["Pennylane", "Sage"], "es": ["Holded", "A3"],
                     "pt": ["Omie", "Conta Azul"], "en": []}
CITY_PLANS = ["Denver", "Vienna", "Florence", "Madison", "Austin", "Charlotte", "Victoria", "Sydney", "Lisbon",
              "Phoenix", "Santiago", "Valencia", "Jackson", "Aurora", "Savannah", "Eugene"]
VENDORS = ["Morgan Stanley", "Hugo Boss", "Ernst & Young", "Johnson & Johnson", "Procter & Gamble", "Wells Fargo",
           "Dell", "Ford", "Porsche", "Siemens", "Bosch", "Ferrero", "Louis Vuitton", "Tata", "Mahindra",
           "Goldman Sachs", "Philips", "Michelin"]
COMPANIES = {
    "en_US": ["Kestrel Analytics", "Brightwater Foods", "Northwind Logistics", "Bluebell Dental", "Copperline Freight",
              "Greenleaf Pharmacy", "Redwood Roofing", "Summit Ridge Clinics", "Prairie Lantern Books"],
    "en_GB": ["Harbourside Homes", "Ironbridge Tools", "Thistle & Oak Interiors", "Kingfisher Care", "Millstone Legal",
              "Oxbow Cycles", "Seaview Lettings"],
    "de_DE": ["Stadtwerke Lindau", "Nordlicht Logistik", "Bäckerei Sonnenkorn", "Alpenblick Reisen", "Hanse Fracht",
              "Rheinwerk Medien", "Elbstrand Immobilien"],
    "fr_FR": ["Boulangeries Soleil", "Atelier Lumière", "Transports Azur", "Cabinet Horizon", "Vignobles du Val",
              "Optique Cerisier"],
    "es_ES": ["Transportes Sierra Norte", "Clínica Sol de Levante", "Grupo Alborada", "Cafés La Brújula",
              "Ópticas Marea"],
    "pt_BR": ["Padaria Pão Dourado", "Transportadora Rio Azul", "Clínica Bem Viver", "Construtora Horizonte",
              "Ótica Girassol"],
    "hi_IN": ["Sahyadri Logistics", "Ganga Textiles", "Nilgiri Foods", "Kaveri Software", "Deccan Dental"],
}
PLACES = {
    "en_US": ["Denver", "Chicago", "Lincoln", "Madison", "Charlotte", "Austin", "Tulsa"],
    "en_GB": ["Manchester", "Chester", "Bristol", "Reading", "Leeds", "Preston"],
    "de_DE": ["Berlin", "Köln", "Hamburg", "Leipzig", "Bremen", "Freiburg"],
    "fr_FR": ["Lyon", "Nantes", "Lille", "Rennes", "Toulouse"],
    "es_ES": ["Sevilla", "Valencia", "Bilbao", "Zaragoza", "Málaga"],
    "pt_BR": ["Curitiba", "Recife", "Campinas", "Vitória", "Natal"],
    "hi_IN": ["Pune", "Bengaluru", "Jaipur", "Chennai", "Indore"],
}
MONTHS = {
    "en": ["January", "March", "April", "May", "June", "July", "August", "September", "October", "November"],
    "de": ["Januar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November"],
    "fr": ["janvier", "mars", "avril", "mai", "juin", "juillet", "septembre", "octobre", "novembre"],
    "es": ["enero", "marzo", "abril", "mayo", "junio", "julio", "septiembre", "octubre", "noviembre"],
    "pt": ["janeiro", "março", "abril", "maio", "junho", "julho", "setembro", "outubro", "novembro"],
}
WEEKDAYS = {
    "en": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"],
    "de": ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag"],
    "fr": ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi"],
    "es": ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado"],
    "pt": ["segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira"],
}
ROLES = {
    "en": [("Interviewer", "P1"), ("Interviewer", "P2"), ("Interviewer", "Participant"), ("Moderator", "Respondent"),
           ("Speaker 1", "Speaker 2"), ("Interviewer", "Customer")],
    "de": [("Interviewer", "P1"), ("Interviewer", "Teilnehmer"), ("Sprecher 1", "Sprecher 2"), ("Moderator", "P3")],
    "fr": [("Enquêteur", "Participant"), ("Intervieweur", "P1"), ("Locuteur 1", "Locuteur 2")],
    "es": [("Entrevistador", "Participante"), ("Entrevistadora", "P1"), ("Hablante 1", "Hablante 2")],
    "pt": [("Entrevistador", "Participante"), ("Entrevistadora", "P2"), ("Falante 1", "Falante 2")],
}

# ---------------------------------------------------------------------------------------
# Templates. Slots: {who:form} a person (who: r respondent, i interviewer, c1-c3 the
# respondent's colleagues, s our support or sales person, x and y rare names, h a Japanese or
# Indian colleague said with an honorific, d a colleague whose name has diacritics, n one
# with a nickname); {who?male|female} a word agreeing with that person; {W:form} an
# ordinary word drawn for that form, {W:form=text} that text; {EMAIL:plain|obfuscated|who},
# {PHONE}, {CARD}, {IBAN}, {IP:v4|v6}, {URL:linkedin|github=who|x}.
# ---------------------------------------------------------------------------------------

EN = {
    "title": [
        "Interview with {r:title}", "Pricing interview – {r:title}, {W:company}", "Customer call: {r:title}",
        "{W:company} – onboarding interview", "Billing feedback session", "Support experience – {r:title}",
        "Research call {W:month} – {W:company}", "Interview – pricing and plans", "Customer interview, support",
        "Churn interview (annual plan)", "Onboarding study, wave 2",
    ],
    "open_q": [
        "Thanks for making the time today. Could you start by introducing yourself and what you do?",
        "Hi, I'm {i:intro} from the {W:product} research team. Before we start, could you tell me a little about yourself and your role?",
        "Great to meet you. I'm {i:intro} and I look after customer research here. How would you describe your job?",
        "Okay, we're recording now. Could you say who you are and how you use {W:product}?",
        "Hello and welcome. My name is {i:intro}, I'll be asking the questions today. Tell me a bit about your team?",
    ],
    "open_a": [
        "Sure. This is {r:intro}, I run the finance side at {W:company}, so anything with invoices ends up with me.",
        "My name is {r:intro} and I'm the operations lead at {W:company}. Billing, tooling, the boring stuff.",
        "I'm {r:intro} from {W:company}. I manage a support team of six and we live in {W:product} all day.",
        "Hi! {r:intro} here, head of revenue operations at {W:company}. We've been on {W:product} for about two years.",
        "Of course. I'm {r:intro}, office manager at {W:company} in {W:place}. I picked {W:product} after we outgrew {W:tool}.",
        "{W:initial=Honestly} I wear many hats. I'm {r:intro}, co-founder of {W:company}, which means I also pay for everything.",
    ],
    "onboarding": [
        ("How did you first hear about {W:product}?",
         "A webinar in {W:month}. We were drowning in spreadsheets and it looked simple enough."),
        ("What did the first login look like?",
         "An empty dashboard. {W:initial=Basically} I had no idea where to start until I found the sample project."),
        ("Was the import documentation clear?",
         "Not for our setup. We're on {W:version} of the on-prem connector and the screenshots were from something much older."),
        ("Did you connect it to other tools?",
         "{W:tool} and {W:tool}. The second one took a week because of permissions."),
        ("How did the onboarding go when you first signed up?",
         "{W:initial=Honestly}, it was slow. I took over the account from {c1:mention} in {W:month}, and nobody had written anything down."),
        ("Who set things up on your side?",
         "{c2:full} did most of it. {c2:possessive} checklist is still pinned in our {W:tool} workspace."),
        ("Did you get any help from our side during setup?",
         "Yes, someone called {x:rare} walked us through the import. {x:rare} was very patient with us."),
        ("What was the hardest part of the setup?",
         "Single sign-on. Our IT admin {n:full}, we all call {n?him|her} {n:nickname}, spent a whole {W:weekday} on it because the docs still described version {W:version}."),
        ("Was importing your old data a problem?",
         "A bit. We had eleven thousand contacts in {W:tool} and the import kept timing out, so {c1:partial} ended up splitting the file by hand."),
        ("How long until the team used it day to day?",
         "About six weeks. We started on the {W:city_brand} plan and moved up in {W:month} when the office in {W:place} joined."),
        ("Did anyone on your team resist the change?",
         "{c3:given} did, at first. {c3:given} had built a whole system of spreadsheets in {W:product=Excel} and didn't want to let go."),
        ("What would have made the first week easier?",
         "A checklist, and a named person. We had {s:mention} for two days, then the ticket went to a queue."),
        ("Who was your main contact during onboarding?",
         "That was {h:full} from your partner team, and {h:honorific} was the best part of the whole thing."),
        ("Did you use the training videos?",
         "{W:initial=Some} of them. {c2:lower} watched all of them and wrote notes for the rest of us."),
        ("Did you migrate everything at once?",
         "No, team by team. {W:initial=Mark} that down as a tip: start with the smallest team. Ours was {c1:possessive} team in {W:place}."),
    ],
    "pricing": [
        ("How does the price compare with your budget?",
         "It's about a third of our tooling budget. {W:initial=Rich} features are nice, but we mostly need the basics."),
        ("Do you understand how the invoice total is calculated?",
         "Not really. The add-ons appear and disappear, and the {W:city_brand} plan page says something else."),
        ("Would usage-based pricing work for you?",
         "Maybe. We spike in {W:month} when the audits happen, so a flat fee is easier to plan."),
        ("Let's talk about pricing. How did you choose the plan you're on?",
         "We compared the {W:city_brand} tier with what {W:tool} charges. {c1:given} made a spreadsheet, and the per-seat price decided it."),
        ("Has the price ever made you think about leaving?",
         "Last {W:month}, yes. The renewal went up eighteen percent and I had to talk to {c3:mention} in procurement to justify every seat."),
        ("Who signs off on the renewal?",
         "{c3?Mr|Ms} {c3:surname}, our CFO. {W:initial=Will} the budget stretch to the bigger plan? Only if the usage reports back it up."),
        ("What would a fair price look like for you?",
         "Per active user, not per seat. Half our seats sit idle over the summer, from {W:month} on."),
        ("How do you compare us with the alternatives?",
         "We got a quote from {W:tool} and one from a reseller in {W:place}. {W:initial=Frankly}, yours was the only one that didn't need a call with sales."),
        ("Is the {W:city_brand} plan the right size for you?",
         "Not really. It caps us at ten projects, and {c2:full} hit that cap in the first month. {c2:partial} was not amused."),
        ("Did the annual discount matter?",
         "A lot. {W:initial=Bill} us yearly and I'm happy, it's one approval instead of twelve. {c3:possessive} team hates monthly card charges."),
        ("Did you look at the enterprise plan?",
         "We did. The sales rep, {s:full}, sent a quote, but it assumed we're the size of {W:vendor}. We are thirty people."),
        ("Do you know what other teams pay?",
         "A friend at {W:vendor} told me they're on the {W:city_brand} tier too, with a discount we never got. {W:initial=Grace} periods would have helped us more than discounts."),
    ],
    "support": [
        ("What's the best number for urgent issues?",
         "My mobile, {PHONE}. The office line goes to voicemail after five."),
        ("Do you share feedback publicly?",
         "Sometimes. I wrote a thread about the migration on {URL:x}, people still reply to it."),
        ("What do you think of the help center?",
         "It's fine for the basics. For anything about the API I end up asking in the community forum."),
        ("Have you hit any errors recently?",
         "Yes, a timeout on exports. The error page showed our IP, {IP:v4}, and a request ID, which I sent in."),
        ("How did you report it?",
         "Through the chat widget. {W:initial=Hope} is not a strategy, so I also called the hotline on {W:weekday}."),
        ("Anything else about the connector?",
         "Our server logs say the connector on {IP:v6} retries forever. We're on {W:version}, maybe the next release fixes it."),
        ("Have you had to contact support?",
         "A few times. The worst was a login problem: everything from our office IP, {IP:v4}, was blocked for a week."),
        ("How did that ticket go?",
         "{s:full} from your support team answered within an hour, which surprised me. {s:partial} even called me back on {PHONE}."),
        ("What did support ask you for?",
         "The usual things: the IP, the version, screenshots. Our firewall showed {IP:v6} for the failed calls, and we were on {W:version} at the time."),
        ("Who on your side handles the tickets?",
         "We copied {c1:mention} on every email, because {c1:partial} owns the integration with {W:tool}."),
        ("How do you keep track of open issues?",
         "There's one thread, cc {c2:mention}, and I forward everything to {EMAIL:c1} so it lands in the shared inbox."),
        ("If something breaks today, what's the first thing you do?",
         "Talk to {c1:mention}. If that doesn't work, we open a ticket and wait."),
        ("How do you usually reach us?",
         "Mostly e-mail. My address changed, by the way, it's {EMAIL:obfuscated} now."),
        ("Was there a ticket that went really well?",
         "Yes. Our server at {IP:v4} went down on a {W:weekday} night and {x:rare} stayed on the call until it was back."),
        ("Did the status page help?",
         "Not really. It said everything was fine while {c3:mention} was on the phone with me saying nothing loads."),
        ("Do you ever share logs with us?",
         "Yes, I send them to {s:given} directly. Last time the log showed requests from {IP:v4} and {IP:v4}, neither of which is ours."),
        ("How fast do you expect an answer?",
         "Same day. {W:initial=Chase} it after that, I'd say. When {c2:given} was off in {W:month}, one ticket sat for nine days."),
    ],
    "billing": [
        ("What payment methods would you like?",
         "Direct debit. We already pay three vendors that way from {IBAN}, and nobody has to touch a card."),
        ("Did you ever get charged twice?",
         "Once, in {W:month}. Both charges hit the company card, {CARD}. The refund took two weeks."),
        ("Who needs the invoices?",
         "Accounts payable. The shared inbox is fine, and the direct line for questions is {PHONE}."),
        ("Do you need anything on the invoice itself?",
         "Our PO number and the VAT ID. {W:initial=Will} that be possible on the {W:city_brand} plan?"),
        ("How do you pay for the subscription today?",
         "By card. The company card is {CARD}, and finance gets nervous every time it shows up on an invoice."),
        ("Have you tried paying by bank transfer?",
         "Yes, since {W:month}. Our IBAN is {IBAN}, and the invoices go to {EMAIL:c1}."),
        ("Any problems with invoices?",
         "The {W:month} invoice listed {c3:full} as the contact even though {c3:partial} left in spring. Finance rejected it."),
        ("Who deals with billing on your side?",
         "{c2:given} in accounts. The signed contract was scanned and sent back by {c1:linebreak} from legal."),
        ("Did anything go wrong with the contact details?",
         "Yes! The invoices go to {d:full}, our controller, but I typed {d:accentless} into your form, without the accents, and your system created a second contact."),
        ("Did the switch to annual billing work?",
         "Mostly. The first charge on {CARD} failed because the bank flagged it, and nobody told us for nine days."),
        ("How do refunds work for you?",
         "Slowly. When we downgraded, the refund went to the old card, {CARD}, which {c2:given} had already cancelled."),
        ("Does anyone else need access to billing?",
         "Our bookkeeper, {x:rare}. Could you add {EMAIL:x} as a billing contact?"),
        ("Is the invoice format fine for your accountant?",
         "Almost. Our accountant in {W:place} wants the VAT number on page one. {c1:given} sends a corrected copy every {W:weekday}."),
    ],
    "close": [
        ("This was really helpful. Can we follow up if we have more questions?",
         "Of course. Best is {EMAIL:plain}, or call me on {PHONE}."),
        ("Is there a good way to reach you besides e-mail?",
         "LinkedIn, honestly. I'm {URL:linkedin}, I check that more than my inbox."),
        ("Who should we talk to about the technical side?",
         "Talk to {c1:mention}. {c1:partial} is on GitHub as {URL:github=c1}, most of our scripts are there."),
        ("Anything else you'd like to add?",
         "Just that {n:nickname} would love a beta of the new reports. {n?He|She} has been asking since {W:month}."),
        ("Would you be open to a follow-up session in a few weeks?",
         "Sure, send the invite to {EMAIL:obfuscated}. I also post updates on {URL:x}, if that's useful."),
        ("Thank you, that's everything from my side.",
         "Thanks, {i:given}! Good luck with the research."),
    ],
    "special": {
        "linebreak": [
            ("Who signed the contract on your side?",
             "Our COO, {c3:linebreak}. It sat with legal for a month first."),
            ("Who else was on the call with support?",
             "Me and {c2:linebreak} from IT, plus someone from your side."),
        ],
        "honorific": [
            ("Do you work with any partners?",
             "A reseller. Our contact there is {h:full}, and {h:honorific} files half of our tickets."),
            ("Who translates the reports for the other office?",
             "{h:honorific} does, every {W:weekday}. Nobody else has the patience."),
        ],
        "accentless": [
            ("How did the new colleague's account go?",
             "Badly. {d:full} joined in {W:month}, but the account was created as {d:accentless} and single sign-on refused the mismatch."),
        ],
        "surname": [
            ("Who approves the budget?",
             "{c3?Mr|Ms} {c3:surname} in finance. Nothing over a thousand goes through without that signature."),
            ("Who did you speak to in sales?",
             "A {s?Mr|Ms} {s:surname}, I think. Very polite, but the quote never came."),
        ],
        "nickname": [
            ("Who's the power user on your team?",
             "{n:nickname}, without a doubt. {n?He|She} has built dashboards for every department."),
        ],
        "possessive": [
            ("Whose idea was it to switch?",
             "{c1:possessive} idea, originally. {c1:possessive} previous company used it for years."),
        ],
        "mention": [
            ("Who should get the survey results?",
             "Send them to me and cc {c3:mention}, please."),
            ("Who owned the account before you?",
             "I took over the account from {c2:mention} last year."),
        ],
        "given": [
            ("Who else uses it daily?",
             "{c1:given} and {c2:given}, mostly. The rest log in once a month."),
        ],
        "lower": [
            ("Who would know more about the export problem?",
             "I'd ask {c2:lower}, honestly, the exports are {c2?his|her} baby."),
        ],
    },
    "rare": [
        ("Who else from your team should we talk to?",
         "{x:rare}, our data lead. {x:rare} knows the reporting side better than anyone."),
        ("Did anyone leave or join recently?",
         "I took over the account from {x:rare} in {W:month}."),
        ("Who gets copied on support emails?",
         "We copy {x:rare} and {y:rare} on all of them, they keep a log of every ticket."),
    ],
    "end": [
        "Thank you so much, {r:given}. Enjoy the rest of your {W:weekday}.",
        "Thanks again, {r:given}, I'll stop the recording now.",
        "Perfect. Thanks for your time, and say hi to {c1:given} from us.",
    ],
}

# Indian English: EN plus these.
HI_EXTRA = {
    "billing": [
        ("How do you pay today?",
         "UPI for the small top-ups and the card for the subscription, {CARD}. Our CA, {h:honorific}, wants proper GST invoices for all of it."),
    ],
    "onboarding": [
        ("Who else on your team uses it?",
         "{h:full} from the {W:place} office. Everyone calls {h?him|her} {h:honorific}, {h?he|she} has been with us twenty years."),
        ("How was the rollout for the other office?",
         "Good. {c1:given} ran the training in Hindi and English, and {c2:mention} handled the data migration from {W:tool}."),
    ],
    "support": [
        ("Who do you escalate to?",
         "Our vendor manager, {c3:full}. {c3:possessive} phone is always on, {PHONE}, even on a {W:weekday}."),
    ],
}

DE = {
    "title": [
        "Interview mit {r:title}", "Gespräch mit {r:title} ({W:company})", "Kundeninterview {W:company}: Preise",
        "Onboarding-Feedback – {r:title}", "Interview {W:month}: Abrechnung",
        "Kundeninterview Support", "Interview Onboarding, Welle 2", "Kündigungsgründe – Jahrestarif",
    ],
    "open_q": [
        "Danke, dass Sie sich die Zeit nehmen. Stellen Sie sich doch bitte kurz vor.",
        "Hallo, ich bin {i:intro} vom Research-Team von {W:product}. Erzählen Sie mir zuerst etwas über sich und Ihre Rolle?",
        "Die Aufnahme läuft. Mein Name ist {i:intro}. Was machen Sie bei {W:company}?",
    ],
    "open_a": [
        "Gern. Ich bin {r:intro} und leite die Buchhaltung bei {W:company}, alles mit Rechnungen landet bei mir.",
        "Mein Name ist {r:intro}, ich leite den Kundenservice bei {W:company} in {W:place}.",
        "Hier ist {r:intro} von {W:company}. {W:initial=Ehrlich} gesagt mache ich alles, was mit Tools zu tun hat.",
        "{r:intro}, Geschäftsführung bei {W:company}. Wir nutzen {W:product} seit ungefähr zwei Jahren.",
    ],
    "onboarding": [
        ("Wie sind Sie auf {W:product} gestoßen?",
         "Über ein Webinar im {W:month}. Wir sind in {W:product=Excel}-Listen untergegangen."),
        ("War die Import-Doku verständlich?",
         "Nicht für unser Setup. Wir haben den Connector in Version {W:version}, und die Screenshots waren viel älter."),
        ("Wie lief das Onboarding am Anfang?",
         "Zäh. Ich habe den Account im {W:month} von {c1:mention} übernommen, und nichts war dokumentiert."),
        ("Wer hat das bei Ihnen eingerichtet?",
         "Das meiste hat {c2:full} gemacht. {c2:possessive} Checkliste hängt immer noch in unserem {W:tool}."),
        ("Hatten Sie Hilfe von unserer Seite?",
         "Ja, {x:rare} hat uns durch den Import begleitet. {x:rare} war sehr geduldig mit uns."),
        ("Was war beim Einrichten am schwierigsten?",
         "Das Single Sign-on. Unser Admin {n:full}, bei uns heißt {n?er|sie} nur {n:nickname}, hat einen ganzen {W:weekday} damit verbracht, weil die Doku noch Version {W:version} beschrieb."),
        ("Wie lange hat es gedauert, bis das Team damit gearbeitet hat?",
         "Etwa sechs Wochen. Wir haben mit dem {W:city_brand}-Tarif angefangen und im {W:month} hochgestuft, als das Büro in {W:place} dazukam."),
        ("Wer war Ihr Ansprechpartner beim Onboarding?",
         "{h:full} aus Ihrem Büro in Tokio. Wir sagen alle {h:honorific}, und {h?er|sie} hat uns wirklich gerettet."),
        ("Gab es Widerstand im Team?",
         "{c3:given} war anfangs dagegen. {c3:given} hatte ein ganzes System aus {W:product=Excel}-Tabellen gebaut."),
        ("Haben Sie alles auf einmal umgestellt?",
         "Nein, Team für Team. {W:initial=Genau} so würde ich es wieder machen. Angefangen hat {c1:possessive} Team in {W:place}."),
    ],
    "pricing": [
        ("Wie passt der Preis zu Ihrem Budget?",
         "Etwa ein Drittel unseres Tool-Budgets. {W:initial=Klar}, das ist okay, solange nichts dazukommt."),
        ("Wäre nutzungsbasierte Abrechnung etwas für Sie?",
         "Vielleicht. Im {W:month} haben wir Prüfungen, da steigt die Nutzung stark an."),
        ("Sprechen wir über den Preis. Wie haben Sie sich für Ihren Tarif entschieden?",
         "Wir haben den {W:city_brand}-Tarif mit {W:tool} verglichen. {c1:given} hat eine Tabelle gebaut, am Ende hat der Preis pro Platz entschieden."),
        ("Hat der Preis Sie je an eine Kündigung denken lassen?",
         "Im {W:month} schon. Die Verlängerung war achtzehn Prozent teurer, und ich musste {c3?Herrn|Frau} {c3:surname} aus dem Einkauf jeden Platz begründen."),
        ("Wer gibt die Verlängerung frei?",
         "{c3:possessive} Team im Controlling. {W:initial=Deshalb} brauchen wir Nutzungsberichte."),
        ("Wie vergleichen Sie uns mit anderen Anbietern?",
         "Wir hatten ein Angebot von {W:tool} und eins von einem Händler aus {W:place}. Ihres war das einzige ohne Vertriebstermin."),
        ("Passt der {W:city_brand}-Tarif von der Größe her?",
         "Nicht ganz. Er ist auf zehn Projekte begrenzt, und {c2:full} war schon im ersten Monat am Limit. {c2:partial} war nicht begeistert."),
        ("Haben Sie sich den Enterprise-Tarif angeschaut?",
         "Ja, {s:full} aus Ihrem Vertrieb hat ein Angebot geschickt, aber das war für eine Firma wie {W:vendor} gedacht. Wir sind dreißig Leute."),
    ],
    "support": [
        ("Unter welcher Nummer erreichen wir Sie in dringenden Fällen?",
         "Mobil unter {PHONE}. Die Zentrale ist ab fünf nicht mehr besetzt."),
        ("Teilen Sie Feedback öffentlich?",
         "Manchmal. Ich habe auf {URL:x} einen Thread über die Migration geschrieben."),
        ("Hatten Sie zuletzt Fehler?",
         "Ja, Timeouts beim Export. Die Fehlerseite zeigte unsere IP {IP:v4} und eine Request-ID, die habe ich weitergegeben."),
        ("Wie haben Sie das gemeldet?",
         "Über den Chat, und am {W:weekday} zusätzlich über die Hotline."),
        ("Und der Connector?",
         "Laut Serverlog versucht der Connector auf {IP:v6} es endlos neu. Wir sind auf {W:version}."),
        ("Mussten Sie schon den Support kontaktieren?",
         "Ein paarmal. Am schlimmsten war ein Login-Problem: Alles von unserer Büro-IP {IP:v4} war eine Woche lang gesperrt."),
        ("Wie lief dieses Ticket?",
         "{s:full} aus Ihrem Support hat innerhalb einer Stunde geantwortet. {s:partial} hat mich sogar unter {PHONE} zurückgerufen."),
        ("Was wollte der Support von Ihnen wissen?",
         "Das Übliche: IP, Version, Screenshots. Unsere Firewall zeigte {IP:v6} für die fehlgeschlagenen Aufrufe, und wir waren auf {W:version}."),
        ("Wer kümmert sich bei Ihnen um die Tickets?",
         "Wir haben {c1:mention} bei jeder Mail in CC gesetzt, weil {c1:partial} die Anbindung an {W:tool} betreut."),
        ("Was machen Sie, wenn heute etwas kaputtgeht?",
         "Erst mal mit {c1:mention} sprechen. Wenn das nicht hilft, schreiben wir ein Ticket."),
        ("Wie erreichen Sie uns normalerweise?",
         "Per E-Mail. Meine Adresse hat sich übrigens geändert, sie ist jetzt {EMAIL:obfuscated}."),
        ("Gab es ein Ticket, das richtig gut lief?",
         "Ja. Unser Server unter {IP:v4} war an einem {W:weekday} spätabends down, und {x:rare} ist drangeblieben, bis alles lief."),
        ("Teilen Sie Logs mit uns?",
         "Ja, ich schicke sie direkt an {s:given}. Zuletzt standen da Anfragen von {IP:v4}, das ist nicht unsere Adresse."),
    ],
    "billing": [
        ("Welche Zahlungsart wäre Ihnen am liebsten?",
         "Lastschrift. Drei andere Anbieter ziehen schon von {IBAN} ein, und niemand muss eine Karte anfassen."),
        ("Wurden Sie je doppelt belastet?",
         "Einmal, im {W:month}. Beide Buchungen gingen auf die Karte {CARD}, die Erstattung dauerte zwei Wochen."),
        ("Wer braucht die Rechnungen?",
         "Die Kreditorenbuchhaltung. Für Rückfragen ist die Durchwahl {PHONE}."),
        ("Wie bezahlen Sie heute?",
         "Per Kreditkarte, {CARD}. Die Buchhaltung wird jedes Mal nervös, wenn die Nummer auf einer Rechnung steht."),
        ("Haben Sie es mal mit Überweisung probiert?",
         "Ja, seit {W:month}. Unsere IBAN ist {IBAN}, und die Rechnungen gehen an {EMAIL:c1}."),
        ("Gab es Probleme mit Rechnungen?",
         "Auf der Rechnung für {W:month} stand noch {c3:full} als Kontakt, obwohl {c3:partial} im Frühjahr gegangen ist."),
        ("Wer kümmert sich bei Ihnen um die Abrechnung?",
         "{c2:given} aus der Buchhaltung. Den unterschriebenen Vertrag hat {c1:linebreak} aus der Rechtsabteilung eingescannt."),
        ("Gab es Probleme mit den Kontaktdaten?",
         "Ja! Die Rechnungen gehen an {d:full}, aber ich habe {d:accentless} ohne Sonderzeichen ins Formular getippt, und Ihr System hat einen zweiten Kontakt angelegt."),
        ("Wie laufen Erstattungen?",
         "Langsam. Nach dem Downgrade ging das Geld auf die alte Karte {CARD}, die {c2:given} schon gekündigt hatte."),
        ("Braucht sonst noch jemand Zugriff auf die Abrechnung?",
         "Unsere Steuerberaterin, {x:rare}. Können Sie {EMAIL:x} als Rechnungskontakt eintragen?"),
    ],
    "close": [
        ("Das war sehr hilfreich. Dürfen wir uns bei Rückfragen melden?",
         "Natürlich. Am besten per Mail an {EMAIL:plain} oder telefonisch unter {PHONE}."),
        ("Wie erreichen wir Sie sonst am besten?",
         "Über LinkedIn: {URL:linkedin}. Da schaue ich öfter rein als ins Postfach."),
        ("Mit wem sollten wir über die technische Seite sprechen?",
         "Reden Sie mit {c1:mention}. {c1:partial} ist auf GitHub als {URL:github=c1} unterwegs."),
        ("Möchten Sie noch etwas ergänzen?",
         "Nur dass {n:nickname} gern die neuen Berichte testen würde. {n?Er|Sie} fragt seit {W:month} danach."),
        ("Danke, das war's von meiner Seite.",
         "Danke Ihnen, {i?Herr|Frau} {i:surname}! Viel Erfolg mit der Studie."),
    ],
    "special": {
        "linebreak": [
            ("Wer hat den Vertrag bei Ihnen unterschrieben?",
             "Unser COO, {c3:linebreak}. Vorher lag er einen Monat bei der Rechtsabteilung."),
        ],
        "honorific": [
            ("Arbeiten Sie mit Partnern?",
             "Mit einem Händler in Osaka. Unser Kontakt dort ist {h:full}, und {h:honorific} schreibt die Hälfte unserer Tickets."),
        ],
        "accentless": [
            ("Wie lief es mit dem Account des neuen Teammitglieds?",
             "Schlecht. {d:full} hat im {W:month} angefangen, aber der Account wurde als {d:accentless} angelegt, und das Single Sign-on hat abgelehnt."),
        ],
        "surname": [
            ("Wer genehmigt das Budget?",
             "{c3?Herr|Frau} {c3:surname} aus dem Controlling. Ohne diese Unterschrift geht nichts über tausend Euro."),
        ],
        "nickname": [
            ("Wer ist bei Ihnen der Power-User?",
             "{n:nickname}, ganz klar. {n?Er|Sie} hat für jede Abteilung ein Dashboard gebaut."),
        ],
        "possessive": [
            ("Wessen Idee war der Wechsel?",
             "{c1:possessive} Idee. {c1:possessive} alte Firma hat das Tool jahrelang genutzt."),
        ],
        "mention": [
            ("Wer soll die Ergebnisse bekommen?",
             "Schicken Sie sie an mich und setzen Sie {c3:mention} in CC."),
        ],
        "given": [
            ("Wer nutzt es sonst täglich?",
             "Vor allem {c1:given} und {c2:given}. Der Rest meldet sich einmal im Monat an."),
        ],
        "lower": [
            ("Wer weiß mehr über das Export-Problem?",
             "Fragen Sie {c2:lower}, die Exporte sind {c2?sein|ihr} Baby."),
        ],
    },
    "rare": [
        ("Wer steht bei Support-Mails in CC?",
         "Immer {x:rare} und {y:rare}, die beiden führen ein Ticket-Log."),
        ("Mit wem aus Ihrem Team sollten wir noch sprechen?",
         "Mit {x:rare}, {x?unserem Datenverantwortlichen|unserer Datenverantwortlichen}. {x:rare} kennt die Berichte am besten."),
        ("Gab es Wechsel im Team?",
         "Ich habe den Account im {W:month} von {x:rare} übernommen."),
    ],
    "end": [
        "Vielen Dank, {r?Herr|Frau} {r:surname}. Ich beende jetzt die Aufnahme.",
        "Danke für Ihre Zeit und schöne Grüße an {c1:given}.",
    ],
}

FR = {
    "title": [
        "Entretien avec {r:title}", "Entretien client – {W:company}", "Appel {W:company} : facturation",
        "Retour onboarding – {r:title}",
        "Entretien client – support", "Étude onboarding, vague 2", "Entretien résiliation",
    ],
    "open_q": [
        "Merci de prendre le temps. Pouvez-vous vous présenter rapidement ?",
        "Bonjour, je suis {i:intro}, de l'équipe recherche de {W:product}. Pour commencer, parlez-moi un peu de vous ?",
        "L'enregistrement est lancé. Je m'appelle {i:intro}. Quel est votre rôle chez {W:company} ?",
    ],
    "open_a": [
        "Bien sûr. Je m'appelle {r:intro}, je m'occupe de la comptabilité chez {W:company}, donc toutes les factures passent par moi.",
        "Moi c'est {r:intro}, je gère le support client chez {W:company} à {W:place}.",
        "{W:initial=Alors}, je suis {r:intro}, je dirige {W:company} et on utilise {W:product} depuis deux ans.",
    ],
    "onboarding": [
        ("Comment avez-vous découvert {W:product} ?",
         "Par un webinaire en {W:month}. On se noyait dans les tableaux."),
        ("La doc d'import était claire ?",
         "Pas pour notre installation. On a le connecteur en version {W:version}, et les captures étaient bien plus anciennes."),
        ("Comment s'est passé l'onboarding au début ?",
         "Lentement. J'ai repris le compte de {c1:mention} en {W:month}, et rien n'était documenté."),
        ("Qui a fait la configuration chez vous ?",
         "C'est surtout {c2:full}. Sa checklist est encore épinglée dans notre {W:tool}."),
        ("Vous avez eu de l'aide de notre côté ?",
         "Oui, {x:rare} nous a accompagnés pour l'import. {x:rare} a été très {x?patient|patiente}."),
        ("Qu'est-ce qui a été le plus difficile ?",
         "Le SSO. Notre admin, {n:full}, que tout le monde appelle {n:nickname}, y a passé tout un {W:weekday}, parce que la doc décrivait encore la version {W:version}."),
        ("Combien de temps avant que l'équipe l'utilise au quotidien ?",
         "Six semaines environ. On a commencé avec le plan {W:city_brand} et on est montés en {W:month}, quand le bureau de {W:place} nous a rejoints."),
        ("Qui était votre contact pendant l'onboarding ?",
         "{h:full}, de votre bureau de Tokyo. On l'appelait tous {h:honorific}, c'était vraiment le meilleur moment."),
        ("Quelqu'un dans l'équipe a-t-il résisté ?",
         "{c3:given}, au début. {c3:given} avait construit tout un système de tableaux {W:product=Excel}."),
    ],
    "pricing": [
        ("Le prix colle à votre budget ?",
         "C'est environ un tiers de notre budget outils. Ça va, tant qu'il n'y a pas d'options cachées."),
        ("Une facturation à l'usage, ça vous irait ?",
         "Peut-être. En {W:month} on a les audits et l'usage explose."),
        ("Parlons du prix. Comment avez-vous choisi votre formule ?",
         "On a comparé le plan {W:city_brand} avec {W:tool}. {c1:given} a fait un tableau, et c'est le prix par siège qui a tranché."),
        ("Le prix vous a-t-il déjà fait penser à partir ?",
         "En {W:month}, oui. Le renouvellement a augmenté de dix-huit pour cent, et j'ai dû justifier chaque siège auprès de {c3?M.|Mme} {c3:surname} aux achats."),
        ("Comment nous comparez-vous aux autres ?",
         "{W:initial=Franchement}, vous étiez les seuls à ne pas exiger un appel commercial. {W:tool} voulait trois rendez-vous."),
        ("Le plan {W:city_brand} est-il à la bonne taille ?",
         "Pas vraiment. Il est limité à dix projets, et {c2:full} a atteint la limite dès le premier mois. {c2:partial} n'était pas {c2?ravi|ravie}."),
        ("Avez-vous regardé l'offre entreprise ?",
         "Oui, {s:full} de votre équipe commerciale nous a envoyé un devis, mais pour une boîte de la taille de {W:vendor}. Nous sommes trente."),
        ("Qui valide le renouvellement ?",
         "L'équipe de {c3:full}, au contrôle de gestion. {W:initial=Bref}, il nous faut des rapports d'usage."),
    ],
    "support": [
        ("Quel numéro pour les urgences ?",
         "Mon portable, le {PHONE}. Le standard ferme à dix-sept heures."),
        ("Vous partagez vos retours publiquement ?",
         "Parfois. J'ai écrit un fil sur la migration sur {URL:x}."),
        ("Des erreurs récemment ?",
         "Oui, des timeouts à l'export. La page d'erreur affichait notre IP, {IP:v4}, et un identifiant de requête."),
        ("Et le connecteur ?",
         "D'après nos logs, le connecteur sur {IP:v6} réessaie sans fin. On est en {W:version}."),
        ("Avez-vous déjà contacté le support ?",
         "Quelques fois. Le pire, c'était un problème de connexion : tout ce qui venait de l'IP du bureau, {IP:v4}, était bloqué pendant une semaine."),
        ("Et ce ticket, comment ça s'est passé ?",
         "{s:full} a répondu en moins d'une heure. {s:partial} m'a même {r?rappelé|rappelée} au {PHONE}."),
        ("Qu'est-ce que le support vous a demandé ?",
         "Le classique : l'IP, la version, des captures. Notre pare-feu montrait {IP:v6} pour les appels en échec, et on était en {W:version}."),
        ("Qui gère les tickets chez vous ?",
         "On mettait {c1:mention} en copie de chaque mail, parce que {c1:partial} s'occupe de l'intégration avec {W:tool}."),
        ("Si quelque chose casse aujourd'hui, vous faites quoi ?",
         "J'en parle d'abord à {c1:mention}. Sinon, on ouvre un ticket."),
        ("Comment nous contactez-vous d'habitude ?",
         "Par mail. D'ailleurs mon adresse a changé, c'est {EMAIL:obfuscated} maintenant."),
        ("Un ticket qui s'est très bien passé ?",
         "Oui. Notre serveur, {IP:v4}, est tombé un {W:weekday} soir et {x:rare} est {x?resté|restée} en ligne jusqu'au bout."),
    ],
    "billing": [
        ("Quel moyen de paiement préférez-vous ?",
         "Le prélèvement. Trois fournisseurs prélèvent déjà sur {IBAN}, personne ne touche à une carte."),
        ("Avez-vous déjà été débités deux fois ?",
         "Une fois, en {W:month}. Les deux débits sont passés sur la carte {CARD}, le remboursement a pris deux semaines."),
        ("Qui reçoit les factures ?",
         "La comptabilité fournisseurs. Pour les questions, le numéro direct est le {PHONE}."),
        ("Comment payez-vous aujourd'hui ?",
         "Par carte, la carte de la société : {CARD}. La compta n'aime pas la voir sur les factures."),
        ("Avez-vous essayé le virement ?",
         "Oui, depuis {W:month}. Notre IBAN, c'est {IBAN}, et les factures partent à {EMAIL:c1}."),
        ("Des problèmes avec les factures ?",
         "La facture de {W:month} indiquait encore {c3:full} comme contact, alors que {c3:partial} est {c3?parti|partie} au printemps."),
        ("Qui s'occupe de la facturation chez vous ?",
         "{c2:given}, à la compta. Le contrat signé a été scanné par {c1:linebreak}, du service juridique."),
        ("Un souci avec les coordonnées ?",
         "Oui ! Les factures vont à {d:full}, mais j'ai tapé {d:accentless} sans les accents dans votre formulaire, et votre système a créé un deuxième contact."),
        ("Et les remboursements ?",
         "Lents. Après le passage à la formule inférieure, l'argent est revenu sur l'ancienne carte, {CARD}, que {c2:given} avait déjà résiliée."),
    ],
    "close": [
        ("C'était très utile. On peut vous recontacter si besoin ?",
         "Bien sûr. Le mieux, c'est {EMAIL:plain}, ou par téléphone au {PHONE}."),
        ("Un autre moyen de vous joindre ?",
         "LinkedIn : {URL:linkedin}. Je le consulte plus souvent que mes mails."),
        ("À qui parler pour la partie technique ?",
         "Parlez-en à {c1:mention}. {c1:partial} est sur GitHub, {URL:github=c1}."),
        ("Autre chose à ajouter ?",
         "Juste que {n:nickname} aimerait tester les nouveaux rapports. {n?Il|Elle} le demande depuis {W:month}."),
    ],
    "special": {
        "linebreak": [
            ("Qui a signé le contrat chez vous ?",
             "{c3?Notre directeur|Notre directrice} des opérations, {c3:linebreak}. Le juridique l'a gardé un mois avant."),
        ],
        "honorific": [
            ("Vous travaillez avec des partenaires ?",
             "Un revendeur à Osaka. Notre contact là-bas, c'est {h:full}, et {h:honorific} ouvre la moitié de nos tickets."),
        ],
        "accentless": [
            ("Et le compte de la nouvelle recrue ?",
             "Mal parti. {d:full} a commencé en {W:month}, mais le compte a été créé comme {d:accentless} et le SSO a refusé."),
        ],
        "surname": [
            ("Qui valide le budget ?",
             "{c3?M.|Mme} {c3:surname}, au contrôle de gestion. Rien au-dessus de mille euros ne passe sans sa signature."),
        ],
        "nickname": [
            ("Qui est l'expert chez vous ?",
             "{n:nickname}, sans hésiter. {n?Il|Elle} a construit un tableau de bord pour chaque service."),
        ],
        "mention": [
            ("À qui envoyer les résultats ?",
             "À moi, et mettez {c3:mention} en copie, s'il vous plaît."),
        ],
        "given": [
            ("Qui d'autre l'utilise tous les jours ?",
             "Surtout {c1:given} et {c2:given}. Les autres se connectent une fois par mois."),
        ],
        "lower": [
            ("Qui en sait plus sur le problème d'export ?",
             "Demandez à {c2:lower}, les exports c'est son bébé."),
        ],
    },
    "rare": [
        ("Qui est en copie des mails au support ?",
         "Toujours {x:rare} et {y:rare}, ce sont eux qui tiennent le journal des tickets."),
        ("Avec qui d'autre dans l'équipe devrions-nous parler ?",
         "Avec {x:rare}, qui gère nos données. {x:rare} connaît les rapports mieux que personne."),
        ("Des changements dans l'équipe ?",
         "J'ai repris le compte de {x:rare} en {W:month}."),
    ],
    "end": [
        "Merci beaucoup, {r:given}. J'arrête l'enregistrement.",
        "Merci pour votre temps, et bonjour à {c1:given} de notre part.",
    ],
}

ES = {
    "title": [
        "Entrevista con {r:title}", "Llamada con {r:title} ({W:company})", "Entrevista de precios – {W:company}",
        "Feedback de facturación – {r:title}",
        "Entrevista de cliente – soporte", "Estudio de onboarding, ola 2", "Entrevista de baja",
    ],
    "open_q": [
        "Gracias por tu tiempo. ¿Puedes presentarte brevemente?",
        "Hola, soy {i:intro}, del equipo de investigación de {W:product}. Para empezar, ¿me cuentas un poco sobre ti?",
        "Ya estamos grabando. Me llamo {i:intro}. ¿Cuál es tu papel en {W:company}?",
    ],
    "open_a": [
        "Claro. Me llamo {r:intro} y llevo la contabilidad en {W:company}, así que todas las facturas pasan por mí.",
        "Soy {r:intro}, de {W:company}. Coordino el equipo de soporte en {W:place}.",
        "{W:initial=Bueno}, soy {r:intro}, dirijo {W:company} y usamos {W:product} desde hace dos años.",
    ],
    "onboarding": [
        ("¿Cómo conocisteis {W:product}?",
         "Por un webinar en {W:month}. Nos estábamos ahogando en hojas de cálculo."),
        ("¿La documentación de importación era clara?",
         "No para nuestra instalación. Tenemos el conector en la versión {W:version} y las capturas eran mucho más antiguas."),
        ("¿Cómo fue el onboarding al principio?",
         "Lento. Heredé la cuenta de {c1:mention} en {W:month} y no había nada documentado."),
        ("¿Quién lo configuró en vuestra empresa?",
         "Casi todo lo hizo {c2:full}. Su checklist sigue fijada en nuestro {W:tool}."),
        ("¿Tuvisteis ayuda de nuestra parte?",
         "Sí, {x:rare} nos acompañó en la importación. {x:rare} tuvo muchísima paciencia."),
        ("¿Qué fue lo más difícil?",
         "El SSO. {n?Nuestro administrador|Nuestra administradora}, {n:full}, a quien todos llamamos {n:nickname}, se pasó un {W:weekday} entero con eso, porque la documentación aún describía la versión {W:version}."),
        ("¿Cuánto tardó el equipo en usarlo a diario?",
         "Unas seis semanas. Empezamos con el plan {W:city_brand} y subimos en {W:month}, cuando se unió la oficina de {W:place}."),
        ("¿Quién fue vuestro contacto durante el onboarding?",
         "{h:full}, de vuestra oficina de Tokio. {h?Le|La} llamábamos {h:honorific} y fue lo mejor de todo el proceso."),
        ("¿Alguien del equipo se resistió al cambio?",
         "{c3:given}, al principio. {c3:given} tenía todo un sistema de hojas de {W:product=Excel}."),
    ],
    "pricing": [
        ("¿El precio encaja en vuestro presupuesto?",
         "Es más o menos un tercio del presupuesto de herramientas. Está bien mientras no aparezcan extras."),
        ("¿Os serviría pagar por uso?",
         "Quizá. En {W:month} tenemos auditorías y el uso se dispara."),
        ("Hablemos del precio. ¿Cómo elegisteis el plan?",
         "Comparamos el plan {W:city_brand} con {W:tool}. {c1:given} hizo una hoja de cálculo y al final decidió el precio por usuario."),
        ("¿El precio os ha hecho pensar en iros?",
         "En {W:month}, sí. La renovación subió un dieciocho por ciento y tuve que justificar cada licencia ante {c3?el señor|la señora} {c3:surname}, de compras."),
        ("¿Cómo nos comparáis con la competencia?",
         "{W:initial=Sinceramente}, fuisteis los únicos que no pedían una llamada comercial. {W:tool} quería tres reuniones."),
        ("¿El plan {W:city_brand} tiene el tamaño adecuado?",
         "No del todo. Tiene un límite de diez proyectos y {c2:full} lo alcanzó el primer mes. {c2:partial} no estaba nada {c2?contento|contenta}."),
        ("¿Mirasteis el plan enterprise?",
         "Sí, {s:full}, de vuestro equipo comercial, nos mandó un presupuesto, pero pensado para una empresa como {W:vendor}. Somos treinta personas."),
    ],
    "support": [
        ("¿Qué número usamos para urgencias?",
         "Mi móvil, el {PHONE}. La centralita cierra a las cinco."),
        ("¿Compartís feedback en público?",
         "A veces. Escribí un hilo sobre la migración en {URL:x}."),
        ("¿Habéis tenido errores últimamente?",
         "Sí, timeouts al exportar. La página de error mostraba nuestra IP, {IP:v4}, y un identificador de petición."),
        ("¿Y el conector?",
         "Según los logs, el conector en {IP:v6} reintenta sin parar. Estamos en la {W:version}."),
        ("¿Habéis tenido que contactar con soporte?",
         "Algunas veces. Lo peor fue un problema de acceso: todo lo que venía de la IP de la oficina, {IP:v4}, estuvo bloqueado una semana."),
        ("¿Y cómo fue ese ticket?",
         "{s:full} contestó en menos de una hora. {s:partial} incluso me llamó al {PHONE}."),
        ("¿Qué os pidió soporte?",
         "Lo de siempre: la IP, la versión, capturas. El cortafuegos mostraba {IP:v6} en las llamadas fallidas y estábamos en la {W:version}."),
        ("¿Quién gestiona los tickets en vuestro lado?",
         "Poníamos a {c1:mention} en copia en cada correo, porque {c1:partial} lleva la integración con {W:tool}."),
        ("Si algo falla hoy, ¿qué hacéis?",
         "Primero hablo con {c1:mention}. Si no, abrimos un ticket."),
        ("¿Cómo soléis contactarnos?",
         "Por correo. Por cierto, mi dirección ha cambiado, ahora es {EMAIL:obfuscated}."),
        ("¿Algún ticket que fuera muy bien?",
         "Sí. Nuestro servidor, {IP:v4}, se cayó un {W:weekday} por la noche y {x:rare} se quedó en la llamada hasta el final."),
    ],
    "billing": [
        ("¿Qué forma de pago preferís?",
         "La domiciliación. Tres proveedores ya nos cobran de {IBAN} y nadie tiene que tocar una tarjeta."),
        ("¿Os han cobrado dos veces alguna vez?",
         "Una vez, en {W:month}. Los dos cargos fueron a la tarjeta {CARD} y la devolución tardó dos semanas."),
        ("¿Quién recibe las facturas?",
         "Cuentas a pagar. Para dudas, el teléfono directo es el {PHONE}."),
        ("¿Cómo pagáis hoy?",
         "Con la tarjeta de la empresa, {CARD}. A contabilidad no le gusta verla en las facturas."),
        ("¿Habéis probado la transferencia?",
         "Sí, desde {W:month}. Nuestro IBAN es {IBAN} y las facturas van a {EMAIL:c1}."),
        ("¿Algún problema con las facturas?",
         "La factura de {W:month} seguía poniendo a {c3:full} como contacto, aunque {c3:partial} se fue en primavera."),
        ("¿Quién lleva la facturación?",
         "{c2:given}, en contabilidad. El contrato firmado lo escaneó {c1:linebreak}, del departamento legal."),
        ("¿Algún problema con los datos de contacto?",
         "¡Sí! Las facturas van a {d:full}, pero escribí {d:accentless} sin tildes en vuestro formulario y el sistema creó un segundo contacto."),
        ("¿Alguien más necesita acceso a la facturación?",
         "Nuestra gestora, {x:rare}. ¿Podéis añadir {EMAIL:x} como contacto de facturación?"),
    ],
    "close": [
        ("Ha sido muy útil. ¿Podemos escribirte si surgen dudas?",
         "Claro. Lo mejor es {EMAIL:plain}, o llámame al {PHONE}."),
        ("¿Otra forma de contactarte?",
         "LinkedIn: {URL:linkedin}. Lo miro más que el correo."),
        ("¿Con quién hablamos de la parte técnica?",
         "Habla con {c1:mention}. Está en GitHub como {URL:github=c1}."),
        ("¿Algo más que quieras añadir?",
         "Solo que a {n:nickname} le encantaría probar los nuevos informes. Lo pide desde {W:month}."),
    ],
    "special": {
        "linebreak": [
            ("¿Quién firmó el contrato?",
             "{c3?Nuestro director|Nuestra directora} de operaciones, {c3:linebreak}. Antes estuvo un mes en el departamento legal."),
        ],
        "honorific": [
            ("¿Trabajáis con partners?",
             "Con un distribuidor en Osaka. Nuestro contacto allí es {h:full}, y {h:honorific} abre la mitad de nuestros tickets."),
        ],
        "accentless": [
            ("¿Y la cuenta de la nueva incorporación?",
             "Mal. {d:full} empezó en {W:month}, pero la cuenta se creó como {d:accentless} y el SSO la rechazó."),
        ],
        "surname": [
            ("¿Quién aprueba el presupuesto?",
             "{c3?El señor|La señora} {c3:surname}, de control de gestión. Nada por encima de mil euros pasa sin su firma."),
        ],
        "nickname": [
            ("¿Quién es el experto del equipo?",
             "{n:nickname}, sin duda. Ha montado un panel para cada departamento."),
        ],
        "mention": [
            ("¿A quién enviamos los resultados?",
             "A mí, y pon en copia a {c3:mention}, por favor."),
        ],
        "given": [
            ("¿Quién más lo usa a diario?",
             "Sobre todo {c1:given} y {c2:given}. El resto entra una vez al mes."),
        ],
        "lower": [
            ("¿Quién sabe más del problema de exportación?",
             "Pregúntale a {c2:lower}, las exportaciones son cosa suya."),
        ],
    },
    "rare": [
        ("¿Quién va en copia en los correos a soporte?",
         "Siempre {x:rare} y {y:rare}, llevan el registro de tickets."),
        ("¿Con quién más del equipo deberíamos hablar?",
         "Con {x:rare}, que lleva los datos. {x:rare} conoce los informes mejor que nadie."),
        ("¿Ha habido cambios en el equipo?",
         "Heredé la cuenta de {x:rare} en {W:month}."),
    ],
    "end": [
        "Muchas gracias, {r:given}. Paro la grabación.",
        "Gracias por tu tiempo, y saludos a {c1:given}.",
    ],
}

PT = {
    "title": [
        "Entrevista com {r:title}", "Conversa com {r:title} – {W:company}", "Entrevista sobre preços – {W:company}",
        "Feedback de onboarding – {r:title}",
        "Entrevista com cliente – suporte", "Estudo de onboarding, onda 2", "Entrevista de cancelamento",
    ],
    "open_q": [
        "{i?Obrigado|Obrigada} por separar esse tempo. Pode se apresentar rapidinho?",
        "Oi, eu sou {i:intro}, da equipe de pesquisa do {W:product}. Pra começar, me conta um pouco sobre você?",
        "Já estamos gravando. Meu nome é {i:intro}. Qual é o seu papel na {W:company}?",
    ],
    "open_a": [
        "Claro. Meu nome é {r:intro} e eu cuido do financeiro na {W:company}, então toda nota fiscal passa por mim.",
        "Eu sou {r:intro}, da {W:company}. Coordeno o time de suporte em {W:place}.",
        "{W:initial=Olha}, eu sou {r:intro}, {r?sócio|sócia} da {W:company}, e a gente usa o {W:product} há dois anos.",
    ],
    "onboarding": [
        ("Como vocês conheceram o {W:product}?",
         "Num webinar em {W:month}. A gente estava se afogando em planilhas."),
        ("A documentação de importação era clara?",
         "Não pra nossa instalação. A gente tem o conector na versão {W:version} e os prints eram bem mais antigos."),
        ("Como foi o onboarding no começo?",
         "Devagar. Eu assumi a conta que era de {c1:mention} em {W:month}, e nada estava documentado."),
        ("Quem configurou tudo aí?",
         "Quase tudo foi {c2:full}. O checklist {c2?dele|dela} ainda está fixado no nosso {W:tool}."),
        ("Vocês tiveram ajuda do nosso lado?",
         "Sim, {x:rare} acompanhou a importação com a gente. {x:rare} teve uma paciência enorme."),
        ("O que foi mais difícil?",
         "O SSO. {n?Nosso admin|Nossa admin}, {n:full}, que todo mundo chama de {n:nickname}, passou uma {W:weekday} inteira nisso, porque a documentação ainda descrevia a versão {W:version}."),
        ("Quanto tempo até o time usar no dia a dia?",
         "Umas seis semanas. Começamos no plano {W:city_brand} e subimos em {W:month}, quando o escritório de {W:place} entrou."),
        ("Quem foi o contato de vocês no onboarding?",
         "{h:full}, do escritório de Tóquio. A gente chamava de {h:honorific} e foi a melhor parte do processo."),
        ("Alguém do time resistiu à mudança?",
         "{c3:given}, no começo. {c3:given} tinha todo um sistema de planilhas no {W:product=Excel}."),
    ],
    "pricing": [
        ("O preço cabe no orçamento de vocês?",
         "É mais ou menos um terço do orçamento de ferramentas. Tá ok, desde que não apareçam extras."),
        ("Cobrança por uso funcionaria pra vocês?",
         "Talvez. Em {W:month} tem auditoria e o uso dispara."),
        ("Vamos falar de preço. Como vocês escolheram o plano?",
         "Comparamos o plano {W:city_brand} com o {W:tool}. {c1:given} montou uma planilha e no fim o preço por usuário decidiu."),
        ("O preço já fez vocês pensarem em sair?",
         "Em {W:month}, sim. A renovação subiu dezoito por cento e eu tive que justificar cada licença com {c3:mention}, de compras."),
        ("Como vocês comparam a gente com a concorrência?",
         "{W:initial=Sinceramente}, vocês foram os únicos que não exigiram uma call comercial. O {W:tool} queria três reuniões."),
        ("O plano {W:city_brand} tem o tamanho certo?",
         "Não muito. Tem limite de dez projetos e {c2:full} bateu o limite no primeiro mês. {c2:partial} não gostou nada."),
        ("Vocês olharam o plano enterprise?",
         "Sim, {s:full}, do comercial de vocês, mandou uma proposta, mas pensada pra uma empresa do tamanho da {W:vendor}. Somos trinta pessoas."),
    ],
    "support": [
        ("Qual número pra urgência?",
         "Meu celular, {PHONE}. O fixo do escritório não atende depois das cinco."),
        ("Vocês compartilham feedback publicamente?",
         "Às vezes. Escrevi uma thread sobre a migração no {URL:x}."),
        ("Vocês tiveram erros recentemente?",
         "Sim, timeout na exportação. A página de erro mostrava nosso IP, {IP:v4}, e um ID de requisição."),
        ("E o conector?",
         "Pelos logs, o conector em {IP:v6} tenta de novo sem parar. A gente está na {W:version}."),
        ("Vocês já precisaram falar com o suporte?",
         "Algumas vezes. O pior foi um problema de login: tudo que vinha do IP do escritório, {IP:v4}, ficou bloqueado uma semana."),
        ("E como foi esse chamado?",
         "{s:full} respondeu em menos de uma hora. {s:partial} até me ligou de volta no {PHONE}."),
        ("O que o suporte pediu?",
         "O de sempre: o IP, a versão, prints. O firewall mostrava {IP:v6} nas chamadas com erro, e a gente estava na {W:version}."),
        ("Quem cuida dos chamados do lado de vocês?",
         "A gente copiava {c1:mention} em todo e-mail, porque {c1:partial} cuida da integração com o {W:tool}."),
        ("Se algo quebrar hoje, o que vocês fazem?",
         "Primeiro eu falo com {c1:mention}. Se não resolver, abrimos um chamado."),
        ("Como vocês costumam falar com a gente?",
         "Por e-mail. Aliás, meu endereço mudou, agora é {EMAIL:obfuscated}."),
        ("Teve algum chamado que foi muito bem?",
         "Teve. Nosso servidor, {IP:v4}, caiu numa {W:weekday} à noite e {x:rare} ficou na call até o fim."),
    ],
    "billing": [
        ("Qual forma de pagamento vocês preferem?",
         "Débito automático. Três fornecedores já debitam de {IBAN} e ninguém precisa mexer em cartão."),
        ("Já cobraram duas vezes?",
         "Uma vez, em {W:month}. As duas cobranças caíram no cartão {CARD} e o estorno levou duas semanas."),
        ("Quem recebe as notas?",
         "O contas a pagar. Pra dúvidas, o telefone direto é {PHONE}."),
        ("Como vocês pagam hoje?",
         "No cartão da empresa, {CARD}. O financeiro não gosta de ver o número na nota."),
        ("Já tentaram transferência?",
         "Sim, desde {W:month}. Nosso IBAN é {IBAN} e as notas vão para {EMAIL:c1}."),
        ("Algum problema com as notas fiscais?",
         "A nota de {W:month} ainda tinha {c3:full} como contato, mesmo {c3:partial} tendo saído no começo do ano."),
        ("Quem cuida do faturamento?",
         "{c2:given}, no financeiro. O contrato assinado foi escaneado por {c1:linebreak}, do jurídico."),
        ("Algum problema com os dados de contato?",
         "Sim! As notas vão para {d:full}, mas eu digitei {d:accentless} sem acento no formulário e o sistema criou um segundo contato."),
        ("Mais alguém precisa de acesso ao faturamento?",
         "Nossa contadora, {x:rare}. Vocês podem colocar {EMAIL:x} como contato de cobrança?"),
    ],
    "close": [
        ("Foi muito útil. Podemos te procurar se surgirem dúvidas?",
         "Claro. O melhor é {EMAIL:plain}, ou me liga no {PHONE}."),
        ("Tem outro jeito de falar com você?",
         "LinkedIn: {URL:linkedin}. Eu olho mais do que o e-mail."),
        ("Com quem a gente fala sobre a parte técnica?",
         "Fala com {c1:mention}. Tá no GitHub como {URL:github=c1}."),
        ("Mais alguma coisa?",
         "Só que {n:nickname} adoraria testar os relatórios novos. Pede isso desde {W:month}."),
    ],
    "special": {
        "linebreak": [
            ("Quem assinou o contrato?",
             "{c3?Nosso diretor|Nossa diretora} de operações, {c3:linebreak}. Antes ficou um mês no jurídico."),
        ],
        "honorific": [
            ("Vocês trabalham com parceiros?",
             "Com um revendedor em Osaka. Nosso contato lá é {h:full}, e {h:honorific} abre metade dos nossos chamados."),
        ],
        "accentless": [
            ("E a conta da pessoa nova?",
             "Deu problema. {d:full} começou em {W:month}, mas a conta foi criada como {d:accentless} e o SSO recusou."),
        ],
        "surname": [
            ("Quem aprova o orçamento?",
             "{c3?O Sr.|A Sra.} {c3:surname}, do controle financeiro. Nada acima de mil reais passa sem essa assinatura."),
        ],
        "nickname": [
            ("Quem é o expert do time?",
             "{n:nickname}, sem dúvida. Montou um painel pra cada área."),
        ],
        "mention": [
            ("Pra quem a gente manda os resultados?",
             "Pra mim, e copia {c3:mention}, por favor."),
        ],
        "given": [
            ("Quem mais usa todo dia?",
             "Principalmente {c1:given} e {c2:given}. O resto entra uma vez por mês."),
        ],
        "lower": [
            ("Quem sabe mais do problema de exportação?",
             "Pergunta pra {c2:lower}, exportação é com {c2?ele|ela}."),
        ],
    },
    "rare": [
        ("Quem vai em cópia nos e-mails pro suporte?",
         "Sempre {x:rare} e {y:rare}, são eles que controlam os chamados."),
        ("Com quem mais do time a gente deveria falar?",
         "Com {x:rare}, que cuida dos dados. {x:rare} conhece os relatórios melhor que ninguém."),
        ("Teve mudança no time?",
         "Eu assumi a conta que era de {x:rare} em {W:month}."),
    ],
    "end": [
        "Muito {i?obrigado|obrigada}, {r:given}. Vou parar a gravação.",
        "{i?Obrigado|Obrigada} pelo seu tempo, e manda um abraço pro {c1:given}.",
    ],
}

TEMPLATES = {"en": EN, "de": DE, "fr": FR, "es": ES, "pt": PT}
TOPICS = ["onboarding", "pricing", "support", "billing"]
SPECIAL_FORMS = ["linebreak", "honorific", "accentless", "surname", "nickname", "possessive", "mention", "given",
                 "lower"]
VALUE_KINDS = ["IBAN", "CARD", "IP", "PHONE", "EMAIL", "URL"]
PERSON_SLOT = re.compile(r"\{(?:r|i|c1|c2|c3|s|x|y|h|d|n):")

# Spoken e-mail words per language: (at, dot).
SPOKEN = {"en": ("at", "dot"), "de": ("at", "punkt"), "fr": ("arobase", "point"), "es": ("arroba", "punto"),
          "pt": ("arroba", "ponto")}
TLD = {"en_US": "com", "en_GB": "co.uk", "de_DE": "de", "fr_FR": "fr", "es_ES": "es", "pt_BR": "com.br",
       "hi_IN": "in"}
IBAN_FROM = {"en_US": "en_GB", "en_GB": "en_GB", "de_DE": "de_DE", "fr_FR": "fr_FR", "es_ES": "es_ES",
             "pt_BR": "pt_BR", "hi_IN": "en_GB"}
TEST_CARDS = ["4111111111111111", "4242424242424242", "5555555555554444", "5105105105105100", "378282246310005",
              "6011111111111117", "4000056655665556", "2223003122003222"]


class Mark:
    __slots__ = ("kind", "form", "value")

    def __init__(self, kind, form, value):
        self.kind, self.form, self.value = kind, form, value

    def render(self):
        assert OPEN not in self.value and CLOSE not in self.value, self.value
        form = f".{self.form}" if self.form else ""
        return f"{OPEN}{self.kind}{form}:{self.value}{CLOSE}"


class Person:
    def __init__(self, given, surname, gender, ref=None, full=None, nick=None, rare=False, suffix=None, handle=None):
        self.given, self.surname, self.gender = given, surname, gender
        self.full = full or f"{given} {surname}"
        self.ref = ref or surname
        self.nick, self.rare, self.suffix, self.handle = nick, rare, suffix, handle
        self.seen = False


def fold(text):
    """The text without diacritics, as someone typing without them writes it."""
    special = {"ß": "ss", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D",
               "þ": "th", "Þ": "Th", "ð": "d", "Ð": "D", "ı": "i"}
    text = "".join(special.get(c, c) for c in text)
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def luhn_ok(number):
    digits = [int(c) for c in number if c.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def iban_ok(iban):
    compact = iban.replace(" ", "").upper()
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


class Corpus:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.fakers = {}
        for n, locale in enumerate(["en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "pt_BR", "hi_IN", "en_IN"]):
            fake = Faker(locale)
            fake.seed_instance(seed + n)
            self.fakers[locale] = fake
        self.rare = list(RARE)
        self.rng.shuffle(self.rare)
        self.rare_at = 0
        self.japanese = list(JAPANESE)
        self.rng.shuffle(self.japanese)
        self.japanese_at = 0
        self.special_at = 0
        self.value_at = 0

    # --- people -------------------------------------------------------------------
    def faker_person(self, locale, gender=None):
        fake = self.fakers["en_IN" if locale == "hi_IN" else locale]
        gender = gender or self.rng.choice("mf")
        while True:
            given = fake.first_name_male() if gender == "m" else fake.first_name_female()
            if locale == "es_ES":
                first, second = fake.last_name(), fake.last_name()
                if first == second:
                    continue
                return Person(given, f"{first} {second}", gender, ref=first)
            surname = fake.last_name()
            if len(surname) < 3 or surname == given:
                continue
            ref = surname.split()[-1] if locale == "pt_BR" else surname
            return Person(given, surname, gender, ref=ref)

    def devanagari_person(self):
        fake = self.fakers["hi_IN"]
        gender = self.rng.choice("mf")
        given = fake.first_name_male() if gender == "m" else fake.first_name_female()
        handle = self.fakers["en_IN"].user_name()
        return Person(given, fake.last_name(), gender, handle=handle)

    def rare_person(self):
        full, called, ref, gender = self.rare[self.rare_at % len(self.rare)]
        self.rare_at += 1
        return Person(called, ref, gender, full=full, rare=True)

    def accented_person(self, locale):
        source = locale if locale in ("de_DE", "fr_FR", "es_ES", "pt_BR") else self.rng.choice(["fr_FR", "es_ES"])
        while True:
            person = self.faker_person(source)
            if fold(person.full) != person.full:
                return person

    def nickname_person(self, locale, language):
        key = "hi" if locale == "hi_IN" else language
        given, nick, gender = self.rng.choice(NICKNAMES[key])
        base = self.faker_person(locale, gender)
        return Person(given, base.surname, gender, ref=base.ref, nick=nick)

    def honorific_person(self, locale):
        if locale == "hi_IN":
            person = self.faker_person("hi_IN")
            person.suffix = "-ji"
            return person
        given, surname, gender = self.japanese[self.japanese_at % len(self.japanese)]
        self.japanese_at += 1
        return Person(given, surname, gender, suffix="-san")

    # --- values -------------------------------------------------------------------
    def email_of(self, person, ctx, domain=None):
        local_given = fold(person.given).lower().replace(" ", "")
        local_surname = fold(person.ref).lower().replace(" ", "").replace("'", "")
        if person.handle or not local_given.isascii() or not local_given:
            local = person.handle or self.fakers["en_IN"].user_name()
        else:
            shape = self.rng.randrange(4)
            local = [f"{local_given}.{local_surname}", f"{local_given[0]}.{local_surname}",
                     f"{local_given}{local_surname[:1]}", f"{local_given}_{local_surname}"][shape]
        local = re.sub(r"[^a-z0-9._]", "", local) or "contact"
        if domain is None:
            domain = ctx.domain if self.rng.random() < 0.6 else self.fakers[ctx.faker_locale].free_email_domain()
        return f"{local}@{domain}"

    def obfuscate(self, email, language):
        local, domain = email.split("@")
        at, dot = SPOKEN[language]
        style = self.rng.randrange(4)
        if style == 0:
            name, _, rest = domain.partition(".")
            return f"{local} (at) {name} (dot) {rest}"
        if style == 1:
            return f"{local} [at] {domain.replace('.', ' [dot] ')}"
        spoken_local = local.replace(".", f" {dot} ").replace("_", " underscore " if language == "en" else "_")
        spoken_domain = domain.replace(".", f" {dot} ")
        if style == 2:
            return f"{spoken_local} {at} {spoken_domain}"
        return f"{local} at {domain}"

    def phone(self, locale):
        fake = self.fakers[locale]
        while True:
            number = fake.phone_number()
            if "x" not in number and not number.startswith("001"):
                return number

    def card(self):
        if self.rng.random() < 0.3:
            number = self.rng.choice(TEST_CARDS)
        else:
            kind = self.rng.choice(["visa16", "mastercard", "amex", "discover"])
            number = self.fakers["en_US"].credit_card_number(card_type=kind)
        assert luhn_ok(number), number
        style = self.rng.randrange(3)
        if style == 0:
            return "card", number
        if len(number) == 15:
            groups = [number[:4], number[4:10], number[10:]]
        else:
            groups = [number[i:i + 4] for i in range(0, len(number), 4)]
        return "card", (" " if style == 1 else "-").join(groups)

    def iban(self, locale):
        value = self.fakers[IBAN_FROM[locale]].iban()
        assert iban_ok(value), value
        if self.rng.random() < 0.6:
            return "grouped", " ".join(value[i:i + 4] for i in range(0, len(value), 4))
        return "compact", value

    def ipv4(self):
        return self.fakers["en_US"].ipv4_public()

    def ipv6(self):
        value = self.fakers["en_US"].ipv6()
        if self.rng.random() < 0.5:
            value = ipaddress.IPv6Address(value).compressed
        return value

    def version(self):
        r = self.rng
        return f"{r.randint(1, 12)}.{r.randint(0, 20)}.{r.randint(0, 9)}.{r.randint(1, 40)}"

    def slug(self, person):
        base = fold(f"{person.given} {person.ref}").lower()
        base = re.sub(r"[^a-z0-9]+", "-", base).strip("-")
        if not base or not base.isascii():
            base = (person.handle or self.fakers["en_IN"].user_name()).replace("_", "-")
        return base

    def url(self, kind, person):
        r = self.rng
        slug = self.slug(person)
        if kind == "linkedin":
            tail = f"-{r.randrange(16 ** 6):06x}" if r.random() < 0.5 else ""
            prefix = r.choice(["", "https://www.", "www.", "https://"])
            return f"{prefix}linkedin.com/in/{slug}{tail}"
        if kind == "github":
            user = slug.replace("-", "") if r.random() < 0.5 else f"{slug[0]}{slug.split('-')[-1]}"
            return f"{r.choice(['', 'https://'])}github.com/{user}"
        handle = slug.replace("-", "_")[:15]
        return f"{r.choice(['', 'https://'])}x.com/{handle}"

    # --- an interview -------------------------------------------------------------
    def interview(self, number, locale):
        r = self.rng
        language = LANGUAGE[locale]
        bank = TEMPLATES[language]
        if locale == "hi_IN":
            bank = {k: (v + HI_EXTRA[k] if k in HI_EXTRA else v) for k, v in EN.items()}
        ctx = Context(self, locale, language)
        devanagari = locale == "hi_IN" and r.random() < 0.5
        ctx.people["r"] = (self.devanagari_person() if devanagari
                           else self.rare_person() if r.random() < 0.2 else self.faker_person(locale))
        ctx.people["i"] = self.faker_person(locale)
        # The others are made when first named, so that every rare name drawn is used.
        ctx.people.make = {
            "c1": lambda: self.faker_person(locale),
            "c2": lambda: self.rare_person() if r.random() < 0.2 else self.faker_person(locale),
            "c3": lambda: self.rare_person() if r.random() < 0.1 else self.faker_person(locale),
            "s": lambda: self.faker_person(locale),
            "x": self.rare_person,
            "y": self.rare_person,
            "h": lambda: self.honorific_person(locale),
            "d": lambda: self.accented_person(locale),
            "n": lambda: self.nickname_person(locale, language),
        }
        case = "lower" if number % 10 == 3 else "upper" if number % 20 == 11 else None

        # Speaker labels.
        rp, ip = ctx.people["r"], ctx.people["i"]
        # Mostly roles, as transcription tools write them; in a few interviews the
        # respondent's name, in three both names (full or given).
        if devanagari:
            labels = ("Interviewer", Mark("PERSON", "speaker", rp.full))
        elif number % 9 == 2:
            labels = (r.choice(ROLES[language])[0], Mark("PERSON", "speaker", rp.full))
        elif number in (5, 35):
            labels = (Mark("PERSON", "speaker", ip.full), Mark("PERSON", "speaker", rp.full))
        elif number == 44:
            labels = (Mark("PERSON", "speaker", ip.given), Mark("PERSON", "speaker", rp.given))
        else:
            labels = r.choice(ROLES[language])

        title = ctx.fill(r.choice(bank["title"]))
        utterances = []

        def say(who, template):
            segments = ctx.fill(template)
            if case:
                segments = recase(segments, case)
            utterances.append({"speaker": labels[who], "text": segments})

        say(0, r.choice(bank["open_q"]))
        say(1, r.choice(bank["open_a"]))
        # Up to five exchanges from two to four topics, most of them naming nobody; one or
        # two that give a structured value (its kind taken in turn); usually one naming a
        # rare name; one or two for a form of name that would otherwise be seldom (the forms
        # taken in turn too, so that each is seen about as often); all in a random order.
        pairs = r.choice([0, 1, 2, 2, 3, 3, 4, 5])
        topics = r.sample(TOPICS, k=r.choice([2, 3, 4]))
        named, unnamed = [], []
        for topic in topics:
            for pair in bank[topic]:
                (named if PERSON_SLOT.search(pair[1]) else unnamed).append(pair)
        r.shuffle(named)
        r.shuffle(unnamed)
        chosen = []
        while len(chosen) < pairs and (named or unnamed):
            source = named if (named and (not unnamed or r.random() < 0.15)) else unnamed
            chosen.append(source.pop())
        valued = [pair for topic in TOPICS for pair in bank[topic] if not PERSON_SLOT.search(pair[1])]
        for _ in range(r.choice([1, 2, 2])):
            kind = VALUE_KINDS[self.value_at % len(VALUE_KINDS)]
            self.value_at += 1
            candidates = [pair for pair in valued if "{" + kind in pair[1] and pair not in chosen]
            if candidates:
                chosen.append(r.choice(candidates))
        if r.random() < 0.8 and not any("{x:" in answer for _, answer in chosen):
            chosen.append(r.choice(bank["rare"]))
        for _ in range(r.choice([1, 1, 2])):
            form = SPECIAL_FORMS[self.special_at % len(SPECIAL_FORMS)]
            self.special_at += 1
            # French, Spanish and Portuguese say "de X", not "X's".
            specials = bank["special"].get(form) or bank["special"]["mention"]
            specials = [pair for pair in specials if pair not in chosen]
            if specials:
                chosen.append(r.choice(specials))
        r.shuffle(chosen)
        for question, answer in chosen:
            say(0, question)
            say(1, answer)
        closing = list(bank["close"])
        r.shuffle(closing)
        for question, answer in closing[:1]:
            say(0, question)
            say(1, answer)
        if r.random() < 0.3:
            say(0, r.choice(bank["end"]))

        def render(segments):
            if isinstance(segments, Mark):
                return segments.render()
            if isinstance(segments, str):
                return segments
            return "".join(s.render() if isinstance(s, Mark) else s for s in segments)

        for segment in title:
            if isinstance(segment, Mark) and segment.kind == "PERSON":
                segment.form = "title"
        return {
            "id": f"iv-{number:02d}",
            "locale": locale,
            "language": language,
            "title": render(title),
            "utterances": [{"speaker": render(u["speaker"]), "text": render(u["text"])} for u in utterances],
        }


def recase(segments, case):
    out = []
    for s in segments:
        if isinstance(s, Mark):
            value = s.value.lower() if case == "lower" else s.value.upper()
            form = s.form
            if s.kind == "PERSON" and value != s.value:
                form = case
            out.append(Mark(s.kind, form, value))
        else:
            out.append(s.lower() if case == "lower" else s.upper())
    return out


class People(dict):
    """The people of an interview by role, each made when first asked for."""

    make = {}

    def __missing__(self, who):
        person = self[who] = self.make[who]()
        return person


class Context:
    """One interview's people, company and product, and what has been said of them."""

    def __init__(self, corpus, locale, language):
        self.corpus, self.locale, self.language = corpus, locale, language
        self.faker_locale = locale
        r = corpus.rng
        self.company = r.choice(COMPANIES[locale])
        self.product = r.choice(OWN_PRODUCTS)
        self.plan = r.choice(CITY_PLANS)
        slug = fold(self.company.split()[0]).lower()
        slug = re.sub(r"[^a-z0-9]", "", slug)
        self.domain = f"{slug}.{TLD[locale]}"
        self.people = People()
        self.values = {}
        self.used_ips = set()

    def value(self, key, make):
        if key not in self.values:
            self.values[key] = make()
        return self.values[key]

    def fill(self, template):
        segments = []
        at = 0
        for m in re.finditer(r"\{([^{}]+)\}", template):
            segments.append(template[at:m.start()])
            segments.extend(self.slot(m.group(1)))
            at = m.end()
        segments.append(template[at:])
        return [s for s in segments if s != ""]

    def slot(self, spec):
        r = self.corpus.rng
        c = self.corpus
        if "?" in spec:
            who, words = spec.split("?", 1)
            male, female = words.split("|")
            return [male if self.people[who].gender == "m" else female]
        head, _, arg = spec.partition(":")
        if head == "W":
            form, _, literal = arg.partition("=")
            if literal:
                return [Mark("WORD", form, literal)]
            if form == "product":
                return [Mark("WORD", "product", self.product)]
            if form == "tool":
                return [Mark("WORD", "product", r.choice(TOOLS + TOOLS_BY_LANGUAGE[self.language]))]
            if form == "company":
                return [Mark("WORD", "company", self.company)]
            if form == "vendor":
                return [Mark("WORD", "company", r.choice(VENDORS))]
            if form == "month":
                return [Mark("WORD", "month", r.choice(MONTHS[self.language]))]
            if form == "weekday":
                return [Mark("WORD", "weekday", r.choice(WEEKDAYS[self.language]))]
            if form == "city_brand":
                plan = self.plan if r.random() < 0.7 else r.choice(CITY_PLANS)
                return [Mark("WORD", "city_brand", plan)]
            if form == "place":
                return [Mark("WORD", "place", r.choice(PLACES[self.locale]))]
            if form == "version":
                return [Mark("WORD", "version", c.version())]
            raise ValueError(spec)
        if head == "EMAIL":
            if arg in ("plain", "obfuscated"):
                email = self.value("email.r", lambda: c.email_of(self.people["r"], self))
                if arg == "obfuscated":
                    return [Mark("EMAIL", "obfuscated", c.obfuscate(email, self.language))]
                return [Mark("EMAIL", "plain", email)]
            email = self.value(f"email.{arg}", lambda: c.email_of(self.people[arg], self, self.domain))
            return [Mark("EMAIL", "plain", email)]
        if head == "PHONE":
            number = c.phone(self.locale)
            return [Mark("PHONE", "international" if number.startswith(("+", "00")) else "national", number)]
        if head == "CARD":
            form, number = self.value("card", c.card) if r.random() < 0.5 else c.card()
            return [Mark("CARD", "spaced" if " " in number else "dashed" if "-" in number else "plain", number)]
        if head == "IBAN":
            form, value = self.value("iban", lambda: c.iban(self.locale))
            return [Mark("IBAN", form, value)]
        if head == "IP":
            while True:
                value = c.ipv4() if arg == "v4" else c.ipv6()
                if value not in self.used_ips:
                    self.used_ips.add(value)
                    return [Mark("IP", arg, value)]
        if head == "URL":
            kind, _, who = arg.partition("=")
            return [Mark("URL", kind, c.url(kind, self.people[who or "r"]))]
        return self.person(head, arg)

    def person(self, who, form):
        r = self.corpus.rng
        p = self.people[who]
        seen = p.seen
        suffix = ""
        if form == "intro":
            value, label = (p.full if r.random() < 0.8 else p.given), "intro"
        elif form in ("full", "title"):
            value, label = p.full, form
        elif form == "given":
            value, label = p.given, "given"
        elif form == "surname":
            value, label = p.ref, "surname"
        elif form == "partial":
            if seen:
                value, label = (p.given if p.rare else r.choice([p.given, p.given, p.ref])), "partial"
            else:
                value, label = p.full, "full"
        elif form == "mention":
            value, label = (p.full if not seen or r.random() < 0.5 else p.given), "mention"
        elif form == "possessive":
            value, label = (p.given if seen else p.full), "possessive"
            if self.language == "de":
                suffix = "'" if value[-1] in "sßxz" else "s"
            else:
                suffix = "'s"
        elif form == "nickname":
            value, label = p.nick, "nickname"
        elif form == "accentless":
            candidates = [part for part in (p.given, p.ref, p.full) if fold(part) != part]
            value, label = fold(candidates[0] if candidates else p.full), "accentless"
        elif form == "honorific":
            value, label, suffix = p.ref, "honorific", p.suffix
        elif form == "linebreak":
            value, label = p.full.replace(" ", "\n", 1), "linebreak"
        elif form == "lower":
            value, label = (p.given if seen else p.full).lower(), "lower"
        elif form == "rare":
            value, label = (p.full if not seen or r.random() < 0.3 else p.given), "rare"
        else:
            raise ValueError(form)
        if p.rare and label not in ("title", "speaker"):
            label = "rare"
        p.seen = True
        out = [Mark("PERSON", label, value)]
        if suffix:
            out.append(suffix)
        return out


def main():
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else SEED
    corpus = Corpus(seed)
    order = list(LOCALES)
    assert len(order) == INTERVIEWS
    corpus.rng.shuffle(order)
    lines = []
    for n, locale in enumerate(order, start=1):
        lines.append(json.dumps(corpus.interview(n, locale), ensure_ascii=False))
    text = "\n".join(lines) + "\n"
    if "--stdout" in sys.argv or seed != SEED:
        sys.stdout.write(text)
        return
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(lines)} interviews, {len(text.encode()) / 1024:.0f} KiB")


if __name__ == "__main__":
    main()

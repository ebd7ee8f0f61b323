"""Write questions.jsonl and qrels.tsv from the question list below.

Each piece of evidence is named by (post id, verse number, optional cut) and copied from the
post file itself, so it is verbatim by construction; check_evidence.py checks it independently.
A cut is (first words, last words): the evidence is the verse from the first to the last words.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
POSTS = HERE.parent / "posts"

Ref = tuple  # (post_id, verse) or (post_id, verse, (start, end))

QUESTIONS: list[tuple[str, list[Ref], str]] = [
    (
        "What is charity like? Describe it.",
        [("1-corinthians-13", 4), ("1-corinthians-13", 7)],
        "Charity suffereth long, and is kind; charity envieth not, vaunteth not itself, is not"
        " puffed up. It beareth all things, believeth all things, hopeth all things, endureth all"
        " things.",
    ),
    (
        "Of faith, hope and charity, which matters most?",
        [("1-corinthians-13", 13)],
        "Faith, hope and charity abide, these three; but the greatest of these is charity.",
    ),
    (
        "Is it better to marry or to stay unmarried?",
        [("1-corinthians-07", 8), ("1-corinthians-07", 9)],
        "I say to the unmarried and widows that it is good for them if they abide even as I. But if"
        " they cannot contain, let them marry: for it is better to marry than to burn.",
    ),
    (
        "What do husband and wife owe each other?",
        [("1-corinthians-07", 3), ("1-corinthians-07", 4)],
        "Let the husband render unto the wife due benevolence, and likewise the wife unto the"
        " husband. The wife hath not power of her own body, but the husband; and likewise the"
        " husband hath not power of his own body, but the wife.",
    ),
    (
        "Is it wrong to eat meat that was sacrificed to idols?",
        [("1-corinthians-08", 8), ("1-corinthians-08", 13)],
        "Meat commendeth us not to God: if we eat we are not the better, and if we eat not we are not"
        " the worse. But if meat make my brother to offend, I will eat no flesh while the world"
        " standeth.",
    ),
    (
        "Who saw Christ after he rose from the dead?",
        [
            ("1-corinthians-15", 5),
            ("1-corinthians-15", 6),
            ("1-corinthians-15", 7),
            ("1-corinthians-15", 8),
        ],
        "He was seen of Cephas, then of the twelve; after that of above five hundred brethren at"
        " once, of whom the greater part remain unto this present; after that of James, then of all the apostles; and"
        " last of all he was seen of me also, as of one born out of due time.",
    ),
    (
        "What if Christ was never raised from the dead?",
        [("1-corinthians-15", 14), ("1-corinthians-15", 17)],
        "If Christ be not risen, then is our preaching vain, and your faith is also vain; ye are yet"
        " in your sins.",
    ),
    (
        "How are the dead raised up, and with what kind of body?",
        [("1-corinthians-15", 42), ("1-corinthians-15", 44)],
        "It is sown in corruption; it is raised in incorruption. It is sown a natural body; it is"
        " raised a spiritual body. There is a natural body, and there is a spiritual body.",
    ),
    (
        "Why do you compare the church to a human body?",
        [("1-corinthians-12", 12), ("1-corinthians-12", 26)],
        "As the body is one and hath many members, and all the members, being many, are one body, so"
        " also is Christ. If one member suffer, all the members suffer with it; if one be honoured,"
        " all rejoice with it.",
    ),
    (
        "How should speaking in tongues be handled when the church meets?",
        [("1-corinthians-14", 19), ("1-corinthians-14", 27), ("1-corinthians-14", 28)],
        "In the church I had rather speak five words with my understanding than ten thousand words"
        " in an unknown tongue. If any speak in an unknown tongue, let it be by two or at most three,"
        " in turn, and let one interpret; if there be no interpreter, let him keep silence in the"
        " church.",
    ),
    (
        "May women speak and teach in the church?",
        [("1-corinthians-14", 34), ("1-timothy-02", 12)],
        "Let your women keep silence in the churches: it is not permitted unto them to speak, but"
        " they are commanded to be under obedience. I suffer not a woman to teach, nor to usurp"
        " authority over the man, but to be in silence.",
    ),
    (
        "Why did you preach without taking any pay?",
        [("1-corinthians-09", 14), ("1-corinthians-09", 18)],
        "The Lord hath ordained that they which preach the gospel should live of the gospel. But my"
        " reward is this: that when I preach the gospel I may make it without charge, that I abuse"
        " not my power in the gospel.",
    ),
    (
        "How do you adapt yourself to different people you preach to?",
        [("1-corinthians-09", 20, ("And unto the Jews", "gain the Jews")), ("1-corinthians-09", 22)],
        "Unto the Jews I became as a Jew, that I might gain the Jews; to the weak I became as weak."
        " I am made all things to all men, that I might by all means save some.",
    ),
    (
        "What does an athlete's race have to do with the Christian life?",
        [("1-corinthians-09", 24), ("1-corinthians-09", 25)],
        "They which run in a race run all, but one receiveth the prize: so run, that ye may obtain."
        " Every man that striveth for the mastery is temperate in all things; they do it for a"
        " corruptible crown, but we an incorruptible.",
    ),
    (
        "What did you teach about the Lord's Supper, the bread and the cup?",
        [("1-corinthians-11", 23), ("1-corinthians-11", 26)],
        "I received of the Lord what I delivered unto you: that the Lord Jesus, the same night in"
        " which he was betrayed, took bread. As often as ye eat this bread and drink this cup, ye do"
        " shew the Lord's death till he come.",
    ),
    (
        "Why does the message of the cross look foolish to the world?",
        [("1-corinthians-01", 18), ("1-corinthians-01", 27)],
        "The preaching of the cross is to them that perish foolishness; but unto us which are saved"
        " it is the power of God. God hath chosen the foolish things of the world to confound the"
        " wise, and the weak things to confound the mighty.",
    ),
    (
        "People in Corinth took sides, some for you and some for Apollos. What did you say?",
        [("1-corinthians-01", 12), ("1-corinthians-03", 6)],
        "Every one of you saith, I am of Paul; and I of Apollos; and I of Cephas; and I of Christ."
        " But I have planted, Apollos watered; but God gave the increase.",
    ),
    (
        "Should believers take one another to court?",
        [("1-corinthians-06", 7)],
        "It is utterly a fault among you that ye go to law one with another. Why do ye not rather"
        " take wrong? Why do ye not rather suffer yourselves to be defrauded?",
    ),
    (
        "Is a man justified by keeping the law or by faith?",
        [("romans-03", 28), ("galatians-02", 16, ("Knowing that a man", "faith of Jesus Christ"))],
        "We conclude that a man is justified by faith without the deeds of the law: a man is not"
        " justified by the works of the law, but by the faith of Jesus Christ.",
    ),
    (
        "Is anyone righteous on his own?",
        [("romans-03", 10), ("romans-03", 23)],
        "As it is written, there is none righteous, no, not one: for all have sinned, and come short"
        " of the glory of God.",
    ),
    (
        "If grace covers sin, shall we keep on sinning so that grace may abound?",
        [("romans-06", 1), ("romans-06", 2)],
        "God forbid. How shall we, that are dead to sin, live any longer therein?",
    ),
    (
        "What is the wage of sin?",
        [("romans-06", 23)],
        "The wages of sin is death; but the gift of God is eternal life through Jesus Christ our Lord.",
    ),
    (
        "Why do you end up doing the very things you hate?",
        [("romans-07", 15), ("romans-07", 19), ("romans-07", 24)],
        "What I would, that do I not; but what I hate, that do I. The good that I would I do not:"
        " but the evil which I would not, that I do. O wretched man that I am! who shall deliver me"
        " from the body of this death?",
    ),
    (
        "Can anything separate us from the love of God?",
        [("romans-08", 38), ("romans-08", 39)],
        "I am persuaded that neither death, nor life, nor angels, nor principalities, nor powers, nor"
        " things present, nor things to come, nor height, nor depth, nor any other creature, shall be"
        " able to separate us from the love of God, which is in Christ Jesus our Lord.",
    ),
    (
        "Do all things really work out for good?",
        [("romans-08", 28)],
        "We know that all things work together for good to them that love God, to them who are the"
        " called according to his purpose.",
    ),
    (
        "Should Christians obey the government and pay taxes?",
        [("romans-13", 1), ("romans-13", 7)],
        "Let every soul be subject unto the higher powers, for the powers that be are ordained of"
        " God. Render therefore to all their dues: tribute to whom tribute is due, custom to whom"
        " custom, fear to whom fear, honour to whom honour.",
    ),
    (
        "How should I treat someone who has wronged me?",
        [("romans-12", 19), ("romans-12", 20), ("romans-12", 21)],
        "Avenge not yourselves, but give place unto wrath, for vengeance is the Lord's. If thine"
        " enemy hunger, feed him; if he thirst, give him drink. Be not overcome of evil, but"
        " overcome evil with good.",
    ),
    (
        "Which commandment sums up the whole law?",
        [("romans-13", 10), ("galatians-05", 14)],
        "All the law is fulfilled in one word: Thou shalt love thy neighbour as thyself. Love"
        " worketh no ill to his neighbour: therefore love is the fulfilling of the law.",
    ),
    (
        "Some keep holy days and some do not; some eat anything and some only herbs. Who is right?",
        [("romans-14", 3), ("romans-14", 5)],
        "Let not him that eateth despise him that eateth not, nor him which eateth not judge him that"
        " eateth, for God hath received him. One man esteemeth one day above another, another every"
        " day alike: let every man be fully persuaded in his own mind.",
    ),
    (
        "Can people who never heard the scriptures know anything about God?",
        [("romans-01", 20)],
        "The invisible things of him from the creation of the world are clearly seen, being"
        " understood by the things that are made, even his eternal power and Godhead; so that they"
        " are without excuse.",
    ),
    (
        "What must a person do to be saved?",
        [("romans-10", 9)],
        "If thou shalt confess with thy mouth the Lord Jesus, and shalt believe in thine heart that"
        " God hath raised him from the dead, thou shalt be saved.",
    ),
    (
        "What good can come out of suffering?",
        [("romans-05", 3), ("romans-05", 5)],
        "We glory in tribulations also, knowing that tribulation worketh patience; and patience,"
        " experience; and experience, hope. And hope maketh not ashamed, because the love of God is"
        " shed abroad in our hearts by the Holy Ghost.",
    ),
    (
        "Where were you planning to travel after Jerusalem?",
        [("romans-15", 24), ("romans-15", 28)],
        "When I take my journey into Spain I will come to you, for I trust to see you in my journey."
        " When I have performed this and sealed to them this fruit, I will come by you into Spain.",
    ),
    (
        "Did you write your letters with your own hand?",
        [("romans-16", 22), ("1-corinthians-16", 21)],
        "Tertius wrote the epistle to the Romans for me, and saluted them in the Lord; to the"
        " Corinthians I wrote the salutation of me Paul with mine own hand.",
    ),
    (
        "What is the fruit of the Spirit?",
        [("galatians-05", 22)],
        "The fruit of the Spirit is love, joy, peace, longsuffering, gentleness, goodness, faith,"
        " meekness, temperance: against such there is no law.",
    ),
    (
        "Did you learn your gospel from the other apostles?",
        [("galatians-01", 11), ("galatians-01", 12), ("galatians-01", 17)],
        "The gospel which was preached of me is not after man. I neither received it of man, neither"
        " was I taught it, but by the revelation of Jesus Christ. Neither went I up to Jerusalem to"
        " them which were apostles before me, but I went into Arabia and returned again unto"
        " Damascus.",
    ),
    (
        "When did you first meet Peter, and for how long?",
        [("galatians-01", 18)],
        "Then after three years I went up to Jerusalem to see Peter, and abode with him fifteen days.",
    ),
    (
        "Why did you confront Peter at Antioch?",
        [("galatians-02", 11), ("galatians-02", 12)],
        "When Peter was come to Antioch I withstood him to the face, because he was to be blamed:"
        " before certain came from James he did eat with the Gentiles, but when they were come he"
        " withdrew and separated himself, fearing them which were of the circumcision.",
    ),
    (
        "Do Jew and Greek, slave and free, man and woman still count as different?",
        [("galatians-03", 28)],
        "There is neither Jew nor Greek, there is neither bond nor free, there is neither male nor"
        " female: for ye are all one in Christ Jesus.",
    ),
    (
        "What kind of man were you before you believed?",
        [("galatians-01", 13), ("philippians-03", 5), ("1-corinthians-15", 9)],
        "Beyond measure I persecuted the church of God and wasted it. I was circumcised the eighth"
        " day, of the tribe of Benjamin, an Hebrew of the Hebrews; as touching the law, a Pharisee."
        " I am the least of the apostles, not meet to be called an apostle, because I persecuted"
        " the church of God.",
    ),
    (
        "How do you manage when you have plenty and when you have nothing?",
        [("philippians-04", 11), ("philippians-04", 12), ("philippians-04", 13)],
        "I have learned, in whatsoever state I am, therewith to be content. I know both how to be"
        " abased and how to abound; I am instructed both to be full and to be hungry. I can do all"
        " things through Christ which strengtheneth me.",
    ),
    (
        "What things should we keep our minds on?",
        [("philippians-04", 8, ("whatsoever things are true", "of good report"))],
        "Whatsoever things are true, honest, just, pure, lovely, and of good report; if there be any"
        " virtue, and if there be any praise, think on these things.",
    ),
    (
        "Would you rather die or go on living?",
        [("philippians-01", 21), ("philippians-01", 23), ("philippians-01", 24)],
        "For to me to live is Christ, and to die is gain. I am in a strait betwixt two, having a"
        " desire to depart and to be with Christ, which is far better; nevertheless to abide in the"
        " flesh is more needful for you.",
    ),
    (
        "Did your imprisonment hold back the gospel?",
        [("philippians-01", 12), ("philippians-01", 13)],
        "The things which happened unto me have fallen out rather unto the furtherance of the"
        " gospel, so that my bonds in Christ are manifest in all the palace, and in all other"
        " places.",
    ),
    (
        "Have you already reached perfection?",
        [("philippians-03", 12, ("Not as though", "I follow after")), ("philippians-03", 14)],
        "Not as though I had already attained, either were already perfect: but I follow after."
        " Forgetting those things which are behind, I press toward the mark for the prize of the"
        " high calling of God in Christ Jesus.",
    ),
    (
        "What happened to Epaphroditus?",
        [("philippians-02", 25, ("Yet I supposed", "to you Epaphroditus")), ("philippians-02", 27)],
        "I supposed it necessary to send Epaphroditus to you; for indeed he was sick nigh unto"
        " death, but God had mercy on him, and not on him only but on me also, lest I should have"
        " sorrow upon sorrow.",
    ),
    (
        "What do you think about money and getting rich?",
        [("1-timothy-06", 7), ("1-timothy-06", 10)],
        "Godliness with contentment is great gain, for we brought nothing into this world and it is"
        " certain we can carry nothing out. The love of money is the root of all evil, and some that"
        " coveted after it have pierced themselves through with many sorrows.",
    ),
    (
        "What qualities should a bishop have?",
        [("1-timothy-03", 2), ("titus-01", 7)],
        "A bishop must be blameless, the husband of one wife, vigilant, sober, of good behaviour,"
        " given to hospitality, apt to teach; not selfwilled, not soon angry, not given to wine, no"
        " striker, not given to filthy lucre.",
    ),
    (
        "Should Timothy drink only water?",
        [("1-timothy-05", 23)],
        "Drink no longer water, but use a little wine for thy stomach's sake and thine often infirmities.",
    ),
    (
        "What should a young leader do when people look down on him for his age?",
        [("1-timothy-04", 12)],
        "Let no man despise thy youth; but be thou an example of the believers, in word, in"
        " conversation, in charity, in spirit, in faith, in purity.",
    ),
    (
        "Is physical exercise worth much?",
        [("1-timothy-04", 8)],
        "Bodily exercise profiteth little: but godliness is profitable unto all things, having"
        " promise of the life that now is, and of that which is to come.",
    ),
    (
        "How do you look back on your life now that your death is near?",
        [("2-timothy-04", 6), ("2-timothy-04", 7)],
        "I am now ready to be offered, and the time of my departure is at hand. I have fought a good"
        " fight, I have finished my course, I have kept the faith.",
    ),
    (
        "Who left you at the end, and who stayed with you?",
        [("2-timothy-04", 10), ("2-timothy-04", 11)],
        "Demas hath forsaken me, having loved this present world, and is departed unto Thessalonica;"
        " Crescens to Galatia, Titus unto Dalmatia. Only Luke is with me. Take Mark and bring him"
        " with thee, for he is profitable to me for the ministry.",
    ),
    (
        "What did you ask Timothy to bring you?",
        [("2-timothy-04", 13)],
        "The cloke that I left at Troas with Carpus, and the books, but especially the parchments.",
    ),
    (
        "What is scripture useful for?",
        [("2-timothy-03", 16)],
        "All scripture is given by inspiration of God, and is profitable for doctrine, for reproof,"
        " for correction, for instruction in righteousness.",
    ),
    (
        "Where did Timothy's faith come from?",
        [("2-timothy-01", 5)],
        "The unfeigned faith that is in thee dwelt first in thy grandmother Lois, and thy mother"
        " Eunice; and I am persuaded that in thee also.",
    ),
    (
        "What do you think of the people of Crete?",
        [("titus-01", 12), ("titus-01", 13)],
        "One of their own prophets said, The Cretians are alway liars, evil beasts, slow bellies."
        " This witness is true. Wherefore rebuke them sharply, that they may be sound in the faith.",
    ),
    (
        "Why did you leave Titus behind in Crete?",
        [("titus-01", 5)],
        "I left thee in Crete that thou shouldest set in order the things that are wanting, and"
        " ordain elders in every city, as I had appointed thee.",
    ),
    (
        "How should the church deal with a man who stirs up divisions?",
        [("titus-03", 10)],
        "A man that is an heretick, after the first and second admonition, reject.",
    ),
    (
        "Why are you sending Onesimus back to Philemon, and how should he be received?",
        [("philemon", 12), ("philemon", 16), ("philemon", 18)],
        "I have sent him again: receive him, that is, mine own bowels; not now as a servant, but"
        " above a servant, a brother beloved. If he hath wronged thee, or oweth thee ought, put that"
        " on mine account.",
    ),
    (
        "Do you support yourself by working?",
        [("1-corinthians-04", 12)],
        "We labour, working with our own hands: being reviled, we bless; being persecuted, we suffer it.",
    ),
    (
        "How should the money collection for the saints be gathered?",
        [("1-corinthians-16", 2)],
        "Upon the first day of the week let every one of you lay by him in store, as God hath"
        " prospered him, that there be no gatherings when I come.",
    ),
]


def verses(post_id: str) -> list[str]:
    """The post's verses (its paragraphs after the front matter), in order."""
    path = next(POSTS.glob(f"*/{post_id}.md"))
    body = path.read_text(encoding="utf-8").split("\n---\n", 1)[1]
    return [p.strip() for p in body.split("\n\n") if p.strip()]


def evidence(ref: Ref) -> str:
    """The verse named by `ref`, or its part from the cut's first words to its last."""
    text = verses(ref[0])[ref[1] - 1]
    if len(ref) == 3:
        start, end = ref[2]
        i = text.index(start)
        text = text[i : text.index(end, i) + len(end)]
    return text


def main() -> None:
    with (
        (HERE / "questions.jsonl").open("w", encoding="utf-8") as out,
        (HERE / "qrels.tsv").open("w", encoding="utf-8") as qrels,
    ):
        qrels.write("query_id\tdoc_id\tscore\n")
        for n, (question, refs, answer) in enumerate(QUESTIONS, start=1):
            qid = f"p{n}"
            row = {"id": qid, "text": question, "evidence": [evidence(r) for r in refs]}
            row["answer"] = answer
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            for doc in dict.fromkeys(r[0] for r in refs):
                qrels.write(f"{qid}\t{doc}\t1\n")


if __name__ == "__main__":
    main()

"""The words of a question that say nothing about what it is after, per language.

"How do I ..." carries no subject in any language: `wie`, `ich`, `ein` in German, `как` in
Russian, `cómo`, `el`, `de` in Spanish, `怎么` in Chinese. Counted as content words, they lend
"evidence" to a question whose subject a vault does not hold (nearly every note of a German
vault has `ein`), and `--matched-only` answers a match where there is none.

One small list per language the project judges (core/language_id.py), for the words a question
is made of: question words, pronouns, articles, prepositions, conjunctions, auxiliaries and
the generic verbs ("do", "make", "show", "find"). English's is the list ranking has always
used; a query in another language drops its own language's words besides English's (queries
mix in English names and commands).

Chinese, Japanese and Korean have no spaces: their function words part a run of characters
before it is cut into two-character words, so that `罗宋汤怎么做` is `罗宋汤`, not also the chance
bigrams `汤怎` and `么做`; a Korean word's particle or ending (`파일을`: `을`) is cut from it.
Parting Japanese at hiragana (its particles and endings) was measured and dropped: with the
chance bigrams gone, the share of a near-miss question's words found rose, and the
no-answer questions refused fell from 85 % to 65 % (dev, docs/benchmarks.md).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from vaultmem.core.language_id import LATIN, UNKNOWN, note_language

_WORD = re.compile(r"\w+", re.UNICODE)
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def _fold(word: str) -> str:
    """As core/words.py folds the words relevance compares: lower case, accents off."""
    folded = word.casefold()
    if folded.isascii():
        return folded
    return unicodedata.normalize("NFC", _COMBINING.sub("", unicodedata.normalize("NFKD", folded)))


_ENGLISH = (
    "a about after all also am an and any are as at be been before being but by can could did "
    "do does doing done for from had has have having he her here hers him his how i if in into "
    "is it its just me more most my no not of on once only or other our ours out over own same "
    "she should so some such than that the their theirs them then there these they this those "
    "through to too under until up very was we were what when where which while who whom why "
    "will with would you your yours yourself tell show find know get got let s t")

_WORDS: dict[str, str] = {
    "en": _ENGLISH,
    "ru": (
        "как какой какая какое какие каким какую что чего чем чём где куда откуда когда почему "
        "зачем сколько кто кого кому ли же бы ещё уже так там тут вот это этот эта эти этого "
        "этой этом тот та те то того я меня мне мной мой моя моё мои моего моих ты тебя тебе "
        "твой вы вас вам ваш ваша ваши он она оно они его её ее их ему ей им нам нас мы наш "
        "себя свой своя свои в во на с со к ко по о об обо от до из за для без при про над под "
        "у через между и или а но не ни нет да чтобы если можно нужно надо есть быть был была "
        "было были будет буду делать сделать найти показать узнать сказать получить хочу "
        "очень тоже также всё все весь"),
    "uk": (
        "як який яка яке які що чого чим де куди коли чому навіщо скільки хто чи ж б вже так "
        "там тут це цей ця ці той та ті то я мене мені мій моя моє мої ти тебе тобі твій ви "
        "вас вам ваш він вона воно вони його її їх йому їй їм нам нас ми наш себе свій в у на "
        "з із зі до від за для без при про над під через між і й або а але не ні так щоб якщо "
        "можна треба потрібно є бути був була було були буде робити зробити знайти показати "
        "дізнатися дуже теж також все всі"),
    "de": (
        "wie was welche welcher welches welchen welchem wo wohin woher wann warum wieso wer wen "
        "wem wessen ob ich mich mir mein meine meinen meinem meiner meines du dich dir dein "
        "deine er ihn ihm sie es wir uns unser unsere ihr ihre ihren euch man sich der die das "
        "den dem des ein eine einen einem einer eines kein keine keinen und oder aber sondern "
        "nicht mit von vom zu zum zur auf aus bei beim nach für über unter in im ins an am um "
        "durch ohne gegen bis als dass damit wenn so auch nur noch schon sehr mal da hier dort "
        "ist sind war waren sein bin bist hat haben habe hast hatte wird werden wurde kann "
        "kannst können soll sollte sollten muss müssen darf will möchte mache machen macht "
        "tun zeige zeigen finde finden dieser diese dieses diesen diesem"),
    "fr": (
        "comment quoi que qu quel quelle quels quelles où quand pourquoi qui combien je j me m "
        "moi mon ma mes tu te toi ton ta tes il elle on nous vous ils elles lui leur leurs le "
        "la les l un une des du de d au aux et ou mais ne n pas plus en dans sur sous avec sans "
        "pour par à chez vers entre depuis ce cet cette ces c ça se s sa son ses est sont être "
        "suis es était a ai as avoir ont faire fais fait peut peux pouvoir puis dois doit faut "
        "y si aussi très tout tous toute toutes afficher trouver savoir"),
    "es": (
        "cómo qué cuál cuáles dónde adónde cuándo por porque quién quiénes cuánto cuánta "
        "cuántos cuántas yo me mi mis tú te ti tu tus él ella nosotros vosotros ellos ellas "
        "usted ustedes se su sus el la los las lo un una unos unas de del al a en con sin para "
        "sobre entre desde hasta hacia y e o u pero no ni que si es son está están estar ser "
        "fue era hay ha han he has haber hacer hago hace puedo puede pueden poder debo debe "
        "tengo tiene tener este esta estos estas ese esa esos esas muy más también ya todo "
        "todos toda todas como mostrar encontrar saber"),
    "pt": (
        "como que qual quais onde quando porque por quem quanto quanta quantos quantas eu me "
        "mim meu minha meus minhas tu te você vocês ele ela nós eles elas se seu sua seus suas "
        "o a os as um uma uns umas de do da dos das no na nos nas ao aos em com sem para pelo "
        "pela sobre entre desde até e ou mas não nem se é são está estão estar ser foi era há "
        "tem ter fazer faço faz posso pode podem poder devo deve este esta isto esse essa isso "
        "muito mais também já todo todos toda todas mostrar encontrar saber"),
    "it": (
        "come che cosa quale quali dove quando perché chi quanto quanta quanti quante io mi me "
        "mio mia miei mie tu ti te tuo tua lui lei noi voi loro si suo sua il lo la i gli le "
        "un uno una di del dello della dei degli delle a al allo alla ai agli alle da dal "
        "dalla in nel nello nella con su sul sulla per tra fra e o ma non né se è sono essere "
        "era ho hai ha hanno avere fare faccio fa posso può possono potere devo deve questo "
        "questa questi queste quello quella molto più anche già tutto tutti mostrare trovare "
        "sapere"),
    "nl": (
        "hoe wat welke welk waar wanneer waarom wie ik mij me mijn jij je jou jouw u uw hij "
        "zij ze het wij we ons onze jullie hun zich de een van voor met op aan in uit bij "
        "naar om over onder door zonder tot en of maar niet geen dat dit deze die er als dan "
        "ook al nog zeer heel is zijn was waren ben bent heb heeft hebben wordt worden kan "
        "kun kunnen moet moeten wil doe doen maak maken toon tonen vind vinden"),
    "sv": (
        "hur vad vilken vilket vilka var när varför vem jag mig min mitt mina du dig din ditt "
        "han hon den det vi oss vår ni er de dem sig sin en ett och eller men inte som att "
        "av för med till på i från om under över utan vid är var vara har hade kan kunna ska "
        "skulle måste vill gör göra visa hitta denna detta dessa mycket också redan alla"),
    "da": (
        "hvordan hvad hvilken hvilket hvilke hvor hvornår hvorfor hvem jeg mig min mit mine du "
        "dig din dit han hun den det vi os vores i jer de dem sig sin en et og eller men ikke "
        "som at af for med til på fra om under over uden ved er var være har havde kan kunne "
        "skal skulle må vil gør gøre vise finde denne dette disse meget også allerede alle"),
    "no": (
        "hvordan hva hvilken hvilket hvilke hvor når hvorfor hvem jeg meg min mitt mine du deg "
        "din ditt han hun den det vi oss vår dere de dem seg sin en et og eller men ikke som "
        "at av for med til på fra om under over uten ved er var være har hadde kan kunne skal "
        "skulle må vil gjør gjøre vise finne denne dette disse veldig også allerede alle"),
    "fi": (
        "miten kuinka mikä mitä missä mistä mihin milloin miksi kuka ketä minä minun minua "
        "sinä sinun hän se me meidän te he ne ja tai mutta ei en et emme että kun jos niin "
        "kuin myös on ovat oli olla voi voin voiko pitää täytyy tämä tuo nämä ne tehdä näyttää "
        "löytää kaikki"),
    "pl": (
        "jak co jaki jaka jakie który która które gdzie kiedy dlaczego czemu kto ile czy ja "
        "mnie mi mój moja moje ty ciebie ci twój on ona ono oni one my nas wy was się swój w "
        "we na z ze do od o za dla bez przy po pod nad przez między i a lub albo ale nie że "
        "żeby jeśli jest są był była było być mam ma mają można trzeba muszę zrobić robić "
        "znaleźć pokazać ten ta to te bardzo też także już wszystko"),
    "el": (
        "πώς πως τι ποιος ποια ποιο πού που πότε γιατί πόσο πόσα εγώ μου με εσύ σου σε αυτός "
        "αυτή αυτό εμείς μας εσείς σας αυτοί τους ο η το οι τα του της των τον την ένας μία "
        "ένα στο στη στην στον στα στους από για με χωρίς προς και ή αλλά δεν μη να θα είναι "
        "ήταν έχω έχει κάνω κάνει μπορώ μπορεί πρέπει πολύ επίσης όλα"),
    "ar": (
        "كيف ما ماذا أي أين متى لماذا من كم هل أنا أنت هو هي نحن أنتم هم هذا هذه ذلك تلك "
        "في على إلى عن مع بدون ل ب و أو لكن لا لم لن أن إن كان يكون هناك يمكن أريد"),
    "zh": (
        "怎么 怎样 怎么样 如何 什么 为什么 哪个 哪些 哪里 多少 几个 是否 有没有 可以 能否 能够 "
        "应该 一个 一下 这个 那个 这些 那些 我们 你们 他们 自己 没有 以及 或者 还是 然后 如果 "
        "的话 的 吗 呢 吧 把 被 做"),
    "ja": "方法",
    "ko": (
        "어떻게 어떤 무엇 무슨 뭐 어디 어디서 언제 왜 누가 누구 어느 얼마나 몇 방법 법 것 수 좀 "
        "그리고 또는 및 그 이 저 내 나 제 저는 나는 우리 있는 없는 하는 하기 하려면 해야 해 합니다 "
        "할 있나요 있어 돼 되나요"),
}

#: Korean particles and common endings, longest first, cut from a word's end when a stem of
#: at least one syllable is left (`아카이브를`: `아카이브`).
_KOREAN_ENDINGS = tuple(sorted((
    "은", "는", "이", "가", "을", "를", "의", "에", "에서", "에게", "께", "한테", "로", "으로",
    "와", "과", "도", "만", "부터", "까지", "처럼", "보다", "이나", "나", "이다", "입니다",
    "합니다", "됩니다", "하다", "하기", "하고", "하여", "해서", "하는", "한", "할", "된", "되는",
    "하려면", "하면", "들", "들을", "들의", "들이", "기", "려면", "나요",
), key=len, reverse=True))


@dataclass(frozen=True)
class FunctionWords:
    """One language's function words (folded), as core/words.py's content words skip
    them."""

    language: str
    words: frozenset[str]
    korean: bool = False  # cut Korean particles and endings from words

    def is_function(self, word: str) -> bool:
        return word in self.words

    def cjk_pieces(self, run: str) -> list[str]:
        """A run of CJK characters parted at its function words (Korean: endings cut)."""
        pieces = [run]
        if self.korean:
            pieces = [_cut_korean(p) for p in pieces if p not in self.words]
            pieces = [p for p in pieces if p not in self.words]
        for word in _cjk_words(self.language):
            pieces = [p for piece in pieces for p in piece.split(word) if p]
        return pieces


def _cut_korean(word: str) -> str:
    for ending in _KOREAN_ENDINGS:
        if word.endswith(ending) and len(word) > len(ending):
            return word[: -len(ending)]
    return word


@functools.cache
def _cjk_words(language: str) -> tuple[str, ...]:
    """The language's function words written in CJK characters, longest first (a longer one
    parts a run before a shorter one inside it)."""
    if language not in ("zh", "ja"):
        return ()
    return tuple(sorted(_WORDS[language].split(), key=len, reverse=True))


@functools.cache
def function_words(language: str) -> FunctionWords:
    """The function words a query in `language` (ISO 639-1, "" unknown) skips: English's and
    its own."""
    words = {_fold(w) for w in _ENGLISH.split()}
    words.update(_fold(w) for w in _WORDS.get(language, "").split())
    return FunctionWords(language, frozenset(words), korean=language == "ko")


#: The languages with a list of their own.
LANGUAGES = tuple(_WORDS)
ENGLISH = function_words("en")


@functools.cache
def _own(language: str) -> frozenset[str]:
    return frozenset(_fold(w) for w in _WORDS[language].split())


@functools.lru_cache(maxsize=1024)
def for_query(query: str) -> FunctionWords:
    """The function words of `query`'s language. A question is short: where its script does
    not tell (Latin letters), the language is the one whose function words it uses most
    (core/language_id.py's lists are made for notes, and name too few of a question's); a tie
    takes the tied languages' words together, none (a list of names, a command) English's."""
    language = note_language(query)
    if language != UNKNOWN and language not in LATIN:  # told by its script
        return function_words(language)
    words = {_fold(w) for w in _WORD.findall(query)}
    hits = {lang: len(words & _own(lang)) for lang in LATIN}
    best = max(hits.values())
    tied = sorted(lang for lang, count in hits.items() if count == best)
    if best == 0:
        return function_words(language)
    if len(tied) == 1:
        return function_words(tied[0])
    return FunctionWords("+".join(tied), frozenset().union(*(
        function_words(lang).words for lang in tied)))

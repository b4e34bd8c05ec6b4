"""The red flags of a text that addresses the model, as data (design §8.1, §8.2).

Instructions written to the agent rather than records for it: earlier rules set aside or
declared void, a persona imposed, a hidden act asked for, a claim of authority, a fake
conversation turn. By kind, not by instance, in English, Chinese and the languages of the
attack passes; one tuple of :class:`talos.safety.prefilter.Pat` per rule, named after it
(:data:`talos.safety.rules.RULES` gives each its reason and order). These are the rules about
words: they also run on the text as a reader joins it (:func:`talos.safety.normalize.unsplit`).
"""

from __future__ import annotations

import re

from talos.safety.prefilter import P, Pat

__all__ = ["ADDRESSES_THE_MODEL", "CLAIMS_AUTHORITY"]

_I = re.IGNORECASE

# -- the vocabulary of instructions addressed to the model (issue 13 item 3: by kind, in English
# and Chinese, not by instance)
#: Setting aside what came before.
_OVERRIDE = (
    r"(?:ignore|disregard|forget|override|overrule|bypass|pay\s+no\s+(?:attention|heed)\s+to"
    r"|set\s+aside|stop\s+(?:following|obeying)|(?:do\s+not|don['’]?t|no\s+longer)\s+"
    r"(?:follow|obey))"
)
#: Not after a negation: "don't forget the previous rules" keeps them (a lookbehind per form,
#: so the next, un-negated verb of the same line is still found).
_NOT_NEGATED = (
    r"(?<!don't\s)(?<!don’t\s)(?<!dont\s)(?<!do\snot\s)(?<!never\s)(?<!won't\s)(?<!won’t\s)"
    r"(?<!not\sto\s)"
)
#: What came before, or whose rules they are.
_EARLIER = (
    r"(?:previous|prior|above|earlier|all|any|every|your|system|developer|safety|preceding"
    r"|foregoing|former|original|initial|existing|these|those)"
)
#: The rules a model is given.
_INSTRUCTIONS = (
    r"(?:instructions?|prompts?|guidelines|directives|system\s+prompt|programming|guardrails"
    r"|safeguards|rules)"
)
_RULES_N = (
    rf"(?:{_INSTRUCTIONS}|messages?|directions|constraints|restrictions|polic(?:y|ies)|training"
    r"|context|commands|orders|guidance|checks|filters|protections)"
)
#: "everything above", "what you were told earlier", "all of the above".
_EVERYTHING_BEFORE = (
    r"(?:all|everything|anything|whatever)\s+(?:(?:that\s+)?(?:was\s+|you\s+were\s+|I\s+)?"
    r"(?:said|written|stated|mentioned|given|told)\s+(?:to\s+you\s+)?)?(?:above|before|earlier"
    r"|previously|so\s+far|up\s+to\s+now|until\s+now|prior)\b"
    r"|(?:all\s+of\s+)?the\s+(?:above|preceding|foregoing)\b"
    r"|what(?:ever)?\s+(?:you(?:\s+(?:were|have\s+been|got)|['’]ve\s+been)\s+(?:told|given|taught"
    r"|instructed|asked)|(?:was|has\s+been)\s+(?:said|told|written|given)\s+(?:to\s+you\s+)?"
    r"(?:before|earlier|above|previously|so\s+far))"
)
_MODEL = r"(?:ai|assistant|model|chatbot|bot|agent|llm|gpt|dan|language\s+model)"
_ROGUE = r"(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue)"
_LIMITS = r"(?:rules|restrictions|guidelines|limits|limitations|filters)"
_ZH_OVERRIDE = (
    "忽略|无视|忘记|忘掉|不要理会|不用管|别管|不必管|不要管|不用理会?|别理会?|不理会|理睬|抛开|抛弃|"
    "放弃|跳过|推翻|不再遵守|不要遵守|不用遵守|无需遵守|不必遵守|停止遵守|"
    # the hostile-text pass: 忽视 漠视 撇开 丢弃 摒弃 (set aside, in other words)
    "忽视|漠视|撇开|丢弃|摒弃"
)
_ZH_OVERRIDE_T = " ".join(w.removesuffix("会?") for w in _ZH_OVERRIDE.split("|"))
_ZH_EARLIER = (
    "之前|以上|上面|上述|先前|前面|此前|早先|原来|原有|原先|所有|全部|一切|系统|你的|开发者"
)
#: The rules a model is given, in Chinese. 说明 (instructions) and its kin are the
#: hostile-text pass: 請忽略先前的所有說明 ("ignore all previous instructions", traditional)
#: was delivered unflagged (tests/test_injection_classes.py).
_ZH_RULES = (
    "指令|指示|提示|提示词|规则|要求|设定|限制|约束|规定|命令|准则|守则|说明|指引|指导|指南|提示语"
    "|对话|上下文|消息"
)
#: The AIs a text may address by name or by kind (a human "agent" is not one of them).
_AI = (
    r"(?:ai|a\.i\.|assistant|model|llm|chatbot|language\s+model|(?:ai|coding|autonomous)"
    r"\s+agent|claude|chatgpt|gpt|copilot|codex|gemini)"
)
#: Triggers of the patterns that name an AI (:data:`_AI`): each match holds one of them.
_AI_T = (
    *(" ai", "\tai", " a.i.", "assistant", " model", "\tmodel", "llm", "chatbot", "claude"),
    *("chatgpt", "gpt", "copilot", "codex", "gemini", "coding agent", "autonomous agent"),
)
#: Declaring earlier rules void: "… are void", "… no longer apply", "… have been revoked".
_VOID = (
    r"(?:(?:are|is|were|was|have\s+been|has\s+been)\s+(?:now\s+|hereby\s+|all\s+|officially\s+)?"
    r"(?:void|null(?:\s+and\s+void)?|cancel+ed|revoked|obsolete|invalid|lifted|suspended"
    r"|rescinded|withdrawn|superseded|overridden|no\s+longer\s+(?:valid|in\s+effect|active"
    r"|binding|relevant))|(?:no\s+longer|don['’]?t|do\s+not|doesn['’]?t|does\s+not)\s+apply)\b"
)
#: Jailbreak personas and modes a text may impose on the model, in a Chinese sentence.
_ZH_PERSONA = "DAN|STAN|DUDE|越狱|开发者模式|上帝模式|邪恶"
#: The AIs a Chinese sentence may name.
_ZH_AI = "AI|人工智能|助手|模型|机器人|ChatGPT|GPT|Claude|Gemini|Copilot"
#: Pinyin of the Chinese override vocabulary, syllables optionally apart (``wang ji``).
_PY_OVERRIDE = "hu ?lue|hu ?shi|wu ?shi|wang ?ji|wang ?diao|bie ?guan|bu ?yong ?guan|bu ?yao ?guan"
_PY_EARLIER = "zhi ?qian|yi ?qian|shang ?mian|qian ?mian|yi ?shang|xian ?qian|ci ?qian|suo ?you"
_PY_RULES = "zhi ?ling|zhi ?shi|gui ?ze|ti ?shi|yao ?qiu|xian ?zhi|she ?ding|gui ?ding|ming ?ling"

# -- the same classes in other languages and shapes (attack pass 23): "ignore previous
# instructions" in Japanese, Spanish, Portuguese, French, German, Russian and Korean, built as
# the Chinese ones are (the verb of setting aside, then the rules, with a word that says they
# came before or are the model's); a role imposed without "you are now"; concealment.
#: Spanish and Portuguese (accents as the skeleton folds them: "instrucciones", "instrucoes").
_ES_SET_ASIDE = (
    r"(?:ignora|ignore|ignorad|ignoren|ignorem|olvida|olvide|olvidad|olviden|descarta|descarte"
    r"|descartad|omite|omita|desobedece|esquece|esqueca|esquecam|desconsidera|desconsidere"
    r"|haz\s+caso\s+omiso\s+(?:a|de)|no\s+(?:sigas|siga|obedezcas|obedezca)|deja\s+de\s+seguir"
    r"|nao\s+(?:siga|obedeca))"
)
_ES_RULES = (
    r"(?:instrucciones|instruccion|instrucoes|instrucao|indicaciones|ordenes|ordens|reglas|regras"
    r"|normas|directrices|diretrizes|directivas|consignas|pautas|orientacoes|restricciones"
    r"|restricoes|mensajes|mensagens|prompts?)"
)
_ES_AFTER = (
    r"(?:anteriores|previas|previos|precedentes|de\s+antes|de\s+arriba|originales|originais"
    r"|iniciales|iniciais|del\s+sistema|do\s+sistema|acima)"
)
_ES_MINE = r"(?:tus|sus|vuestras|tuas|suas)"
#: French (skeleton: "precedentes", "regles").
_FR_SET_ASIDE = (
    r"(?:ignore|ignorez|oublie|oubliez|ne\s+(?:tiens|tenez)\s+pas\s+compte|(?:fais|faites)\s+"
    r"abstraction|ne\s+(?:suis|suivez)\s+plus|passe\s+outre|passez\s+outre)"
)
#: A French past participle ("il a ignoré les consignes précédentes", folded to "ignore") is
#: a report, not an instruction: not after an auxiliary.
_FR_NOT_DONE = (
    r"(?<!\ba\s)(?<!\bai\s)(?<!\bas\s)(?<!\bont\s)(?<!\bavons\s)(?<!\bavez\s)(?<!\bavait\s)"
    r"(?<!\bavais\s)(?<!\bete\s)(?<!\bété\s)(?<!\best\s)(?<!\bsont\s)"
)
_FR_RULES = (
    r"(?:instructions?|consignes|directives|regles|règles|ordres|indications|prompts?"
    r"|restrictions|messages)"
)
_FR_AFTER = (
    r"(?:precedentes|précédentes|precedents|précédents|anterieures|antérieures|anterieurs"
    r"|d['’]avant|ci-dessus|initiales|originales|du\s+syst[eè]me)"
)
_FR_MINE = r"(?:tes|vos)"
#: German (the skeleton folds "ü" to "u"; "ue" is written out too).
_DE_SET_ASIDE = (
    r"(?:ignoriere|ignorier|ignorieren\s+Sie|vergiss|vergesst|vergessen\s+Sie|missachte"
    r"|missachten\s+Sie|verwirf|verwerfen\s+Sie|befolge\s+nicht\s+mehr)"
)
_DE_BEFORE = (
    r"(?:vorherigen|vorigen|bisherigen|fr(?:u|ü|ue)heren|obigen|vorangegangenen|vorangehenden"
    r"|urspr(?:u|ü|ue)nglichen|alten|gegebenen|erhaltenen)"
)
_DE_RULES = (
    r"(?:Anweisungen|Anweisung|Instruktionen|Befehle|Regeln|Vorgaben|Richtlinien|Anordnungen"
    r"|Prompts?|Systemprompt|Einschr(?:a|ä|ae)nkungen|Beschr(?:a|ä|ae)nkungen)"
)
_DE_MINE = r"(?:deine|Ihre|eure|s(?:a|ä|ae)mtliche|alle)"
#: Russian.
_RU_SET_ASIDE = (
    r"(?:игнорируй(?:те)?|проигнорируй(?:те)?|забудь(?:те)?|отбрось(?:те)?|пренебреги(?:те)?"
    r"|отмени(?:те)?|не\s+(?:обращай(?:те)?\s+внимания\s+на|слушай(?:те)?|следуй(?:те)?"
    r"|выполняй(?:те)?|подчиняйся|подчиняйтесь))"
)
_RU_BEFORE = (
    r"(?:все|всё|всех|свои|твои|ваши|предыдущи[ех]|прежни[ех]|предшествующи[ех]|изначальны[ех]"
    r"|исходны[ех]|системны[ех]|стары[ех]|вышеуказанны[ех]|вышеизложенны[ех]|данны[ех]\s+ранее)"
)
_RU_RULES = (
    r"(?:инструкци\w*|указани\w*|команд\w*|правил\w*|директив\w*|установк\w*|промпт\w*"
    r"|ограничени\w*|распоряжени\w*|приказ\w*)"
)
#: Japanese and Korean put the rules first and the verb last ("以前の指示を無視して"); a verb
#: told in the past or the passive ("無視された", "무시되었다") is a report.
_JA_EARLIER = "以前|前|これまで|今まで|先ほど|上記|上|従来|元|最初|全て|すべて|あらゆる|システム"
_JA_RULES = (
    "指示|命令|指令|ルール|規則|設定|プロンプト|制約|ガイドライン|インストラクション|指図|説明"
)
_JA_SET_ASIDE = "無視|忘れ|破棄|従わな|従うな"
_KO_EARLIER = "이전|앞|지금까지|기존|위|모든|앞서|원래|시스템"
_KO_RULES = "지시|지침|명령|규칙|설정|프롬프트|안내|제약|제한"
_KO_SET_ASIDE = r"무시|잊어|잊고|잊으|따르지\s*마|따르지\s*말"
#: Acts a hidden instruction asks for, in the imperative.
_ACT = (
    r"(?:send|e-?mail|mail|upload|post|forward|copy|transfer|move|delete|remove|wipe|erase|run"
    r"|execute|push|install|exfiltrate|share|leak|disable|download|wire|pay|commit|publish"
    r"|paste|dump|export|sync|add|change|modify|grant|give|approve|open|print|read|reveal)"
)
#: Where an imperative stands: a line's start (after list or quote marks), a clause's start,
#: or after a word that introduces one ("please", "you must").
_IMPERATIVE = (
    r"(?:(?m:^)[ \t>*#-]*|[.!?;:,]\s+|\b(?:please|now|just|then|and|also|always|you\s+"
    r"(?:must|should|will|shall|can|need\s+to))\s+)"
)
_QUIETLY = r"(?:secretly|covertly|stealthily|quietly|silently|discreetly)"

#: Where a conversation turn starts: a line's start (after quote, list or heading marks, an
#: opening bracket or emphasis) or after a sentence's end.
_TURN = r"(?:^|(?<=[\n>*#\[(\"'`])|(?<=[.!?;)]\s)|(?<=[.!?;)]\s\s))[ \t*\[]*"
#: The roles of a transcript: an AI's, a person's.
_TURN_AI = r"(?:assistant|ai|a\.i\.|chatbot|claude|chatgpt|gpt|gemini|copilot)(?:\]|\*{1,2})?[ \t]?"
_TURN_HUMAN = r"(?:human|user)(?:\]|\*{1,2})?[ \t]?"
#: Triggers of :data:`_TURN_AI`: the role word, then what may follow it before the colon.
_TURN_AI_T = (
    *("assistant", "a.i.", "chatbot", "claude", "gpt", "gemini", "copilot"),
    *("ai:", "ai：", "ai]", "ai*", "ai ", "ai\t"),
)


#: The patterns of "addresses the model": earlier rules set aside or declared void (in
#: English, Chinese and its pinyin, Japanese, Korean, Spanish, Portuguese, French, German,
#: Russian), a persona or a role imposed, a hidden act asked for, concealment.
ADDRESSES_THE_MODEL: tuple[Pat, ...] = (
    # overriding earlier rules: a verb of setting aside + what came before
    P(
        "ignore disregard forget override overrule pay set bypass stop follow obey",
        rf"{_NOT_NEGATED}\b{_OVERRIDE}\b[^\n]{{0,40}}?\b{_EARLIER}\b[^\n]{{0,20}}?"
        rf"\b{_RULES_N}\b",
        _I,
    ),
    P(
        "skip drop discard abandon dismiss throw cancel nullify void supersede erase wipe scrap",
        rf"{_NOT_NEGATED}\b(?:skip|drop|discard|abandon|dismiss|throw\s+out|cancel|nullify"
        rf"|void|supersede|erase|wipe|scrap)\b[^\n]{{0,30}}?\b(?:previous|prior|above"
        rf"|earlier|preceding|foregoing|original|system|your)\b[^\n]{{0,20}}?"
        rf"\b{_INSTRUCTIONS}\b",
        _I,
    ),
    P(
        "ignore disregard forget override overrule pay set bypass stop follow obey",
        rf"{_NOT_NEGATED}\b{_OVERRIDE}\b[\s,:]{{1,3}}(?:{_EVERYTHING_BEFORE})",
        _I,
    ),
    P(
        "instruction rule directive",
        r"\b(?:these|the\s+following|my|new)\s+(?:instructions?|rules|directives)\s+"
        r"(?:override|supersede|replace|take\s+precedence\s+over)\b",
        _I,
    ),
    # addressing the model as a model: a new identity, no rules, its prompt
    P(
        "from",
        r"\bfrom\s+now\s+on\b[\s,:;-]{0,3}(?:you\s+(?:are|will\s+be|shall\s+be|must\s+be"
        r"|become|act|behave|pretend|play|respond\s+as|answer\s+as|speak\s+as|have\s+no)\b"
        r"|you['’](?:re|ll\s+be)\b|your\s+(?:name|role|persona|identity|purpose)\b)",
        _I,
    ),
    P(
        "you",
        rf"\byou\s+are\s+(?:now|no\s+longer)\s+(?:an?\s+|the\s+|in\s+)?(?:\w+\s+){{0,2}}?"
        rf"(?:{_MODEL}|mode|bound|restricted|limited|required|obligated|unrestricted"
        r"|unfiltered|uncensored|jailbroken)\b",
        _I,
    ),
    P(
        "act behave respond answer pretend",
        rf"\b(?:act|behave|respond|answer)\s+as\s+(?:if\s+you\s+(?:are|were|have|had)\s+"
        rf"(?:no\s+{_LIMITS}|an?\s+{_ROGUE})|an?\s+{_ROGUE}\b)"
        rf"|\bpretend\s+(?:to\s+be|(?:that\s+)?you\s+are|you['’]re)\s+(?:an?\s+)?"
        rf"(?:(?:different|another|new|{_ROGUE})\s+)?{_MODEL}\b"
        rf"|\bpretend\s+(?:that\s+)?you\s+(?:have|had)\s+no\s+{_LIMITS}",
        _I,
    ),
    P(
        "you",
        r"\byou\s+(?:have|had|['’]ve)\s+no\s+(?:rules|restrictions|guidelines|filters"
        r"|content\s+polic(?:y|ies)|safety\s+(?:rules|guidelines))\b",
        _I,
    ),
    P(
        "reveal print show repeat output leak disclose dump",
        r"\b(?:reveal|print|show|repeat|output|leak|disclose|dump)\s+(?:me\s+)?your\s+"
        r"(?:(?:full|entire|original|hidden|secret|initial)\s+)?(?:system\s+prompt"
        r"|instructions|prompt|rules)\b|\b(?:reveal|leak|disclose)\s+the\s+"
        r"(?:system|hidden|initial|original)\s+prompt\b",
        _I,
    ),
    P(
        "user human owner person",
        r"\b(?:don['’]?t|do\s+not|never|without)\s+(?:tell(?:ing)?|inform(?:ing)?"
        r"|show(?:ing)?|mention(?:ing)?|notify(?:ing)?|alert(?:ing)?|let(?:ting)?"
        r"|warn(?:ing)?)\b[^\n]{0,20}\b(?:the\s+)?(?:user|human|owner|person)s?\b",
        _I,
    ),
    P(
        "user human",
        r"\b(?:hide|conceal|keep)\b[^\n]{0,30}\b(?:from|secret\s+from)\s+the\s+(?:user|human)\b"
        r"|\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|find\s+out)\b",
        _I,
    ),
    P("instruction", r"\bnew\s+(?:system\s+)?instructions?\s*:", _I),
    # earlier rules declared void (hostile pass of issue 13)
    P(
        (
            *("void", "null", "cancel", "revoked", "obsolete", "invalid", "lifted"),
            *("suspended", "rescinded", "withdrawn", "superseded", "overridden"),
            *("irrelevant", "outdated", "no longer", "t apply", "not apply"),
        ),
        rf"\b{_EARLIER}\s+(?:\w+\s+){{0,2}}?{_RULES_N}\s+{_VOID}"
        r"|\b(?:everything|anything|all(?:\s+(?:text|of\s+this))?|whatever)\s+(?:written\s+|said\s+)?"
        r"(?:above|before|earlier|previously|so\s+far)(?:\s+this\s+(?:line|point|message))?"
        r"\s+(?:is|are|was|has\s+been)\s+(?:now\s+)?(?:obsolete|void|cancel+ed|invalid"
        r"|irrelevant|null|outdated|revoked|no\s+longer\s+(?:valid|relevant))\b",
        _I,
    ),
    # set aside, with what came before named after the rules: "ignore the instructions
    # above", "do not follow the rules you were given"
    P(
        (
            *("above", "before", "so far", "earlier", "you were", "you've", "you’ve"),
            *("you have", "you had", "you got"),
        ),
        rf"{_NOT_NEGATED}\b{_OVERRIDE}\b\s+(?:the|any|all|these|those)\s+(?:\w+\s+)?"
        rf"{_RULES_N}\s+(?:above(?!\s*\d)|before|so\s+far|earlier|(?:that\s+)?you"
        r"(?:['’]ve|\s+have|\s+were|\s+had|\s+got)\s+(?:been\s+)?(?:given|told|received"
        r"|taught|shown))\b",
        _I,
    ),
    # turning the model against the person it works for
    P(
        ("the user", "your user", "the human", "your human", "the owner", "your owner"),
        rf"{_NOT_NEGATED}\b(?:ignore|disregard|stop\s+(?:listening\s+to|following|obeying"
        r"|helping)|(?:do\s+not|don['’]?t|never|no\s+longer)\s+(?:listen\s+to|obey|follow"
        r"|help|trust))\s+(?:the|your)\s+(?:user|human|owner)s?(?:['’]s\s+(?:instructions"
        r"|requests|wishes|orders|commands|messages))?(?=\s*(?:$|[.,;:!)]|\b(?:and|anymore"
        r"|any\s+more|from\s+now)\b))",
        _I,
    ),
    # the model addressed as a model: a note to it, a greeting, "if you are an AI"
    P(
        _AI_T,
        r"\b(?:note|message|instructions?|reminder|rules?|directive|orders?|memo|notice)\s+"
        rf"(?:to|for)\s+(?:the\s+|any\s+|all\s+|you,?\s+(?:the\s+)?)?{_AI}s?\b",
        _I,
    ),
    P(
        _AI_T,
        rf"(?:^|[.!?]\s+|[\s>*#-])(?:dear|hey|hi|hello|attention|attn)\s*[,:]?\s+{_AI}\b",
        _I,
    ),
    P(
        _AI_T,
        rf"\bif\s+you\s+are\s+(?:an?\s+)?(?:large\s+)?(?:automated\s+)?{_AI}\b",
        _I,
    ),
    P(
        "ai, assistant, llm, claude, chatgpt, gpt, copilot, codex, gemini,",
        r"(?im:^[ \t>*#-]*(?:ai|assistant|llm|claude|chatgpt|gpt|copilot|codex|gemini)\s*,"
        r"\s*(?:please\s+)?(?:always|never|you|do|don['’]?t|run|ignore|make|send|delete"
        r"|push|stop|from|remember|when|before|after)\b)",
    ),
    # obeying only this text; an AI without rules
    P(
        (
            *("now obey", "now follow", "now comply", "now only", "obey only"),
            *("follow only", "listen to only"),
        ),
        r"\byou\s+(?:must|will|shall|should)\s+now\s+(?:only\s+)?(?:obey|follow|comply)\b"
        r"|\b(?:obey|follow|listen\s+to)\s+only\s+(?:me\b|my\s+(?:instructions|orders"
        r"|commands|rules)|the\s+(?:instructions|rules|commands)\s+(?:in|of)\s+this\s+"
        r"(?:file|note|message|document|line|text))",
        _I,
    ),
    P(
        ("as dan", "like dan", "be dan"),
        r"\b(?:act|behave|respond|answer)\s+(?:as|like)\s+DAN\b|\bpretend\s+to\s+be\s+DAN\b",
        _I,
    ),
    # 中文: the earlier rules declared void, forgotten, the person not to be heard
    P(
        "不算数 不作数 作废 无效 失效 不再有效 取消 废除 不再适用 不适用",
        r"(?:之前|以上|上面|上述|前面|先前|此前|原来|原有|原先|早先)(?:的|所有的?|全部的?|说的"
        r"|所说的?|的所有)?(?:规则|指令|指示|提示词?|要求|设定|限制|约束|规定|命令|准则|话|内容)?"
        r"(?:都|全部|全都|一律|统统|一概|均)?(?:不算数|不作数|作废|无效|失效|不再有效|取消了?|废除"
        r"|不再适用|不适用)",
    ),
    P(
        "把",
        rf"把(?:{_ZH_EARLIER})[^\n]{{0,6}}?(?:{_ZH_RULES}|说的|的话|内容)[^\n]{{0,4}}?"
        r"(?:忘了|忘掉|忘记|忽略|无视|抛开|丢掉|扔掉|删掉|清空)",
    ),
    P(
        "听 理会 理睬 管 服从 遵从",
        r"(?:不要|别|不用|无需|不必|不许|不准)再?(?:听|听从|理会|理睬|管|服从|遵从)"
        r"(?:用户|主人|使用者)",
    ),
    # pinyin of the override vocabulary (tone marks are folded away by the skeleton)
    P(
        (
            *("hulue", "hu lue", "hushi", "hu shi", "wushi", "wu shi", "wangji"),
            *("wang ji", "wangdiao", "wang diao", "bieguan", "bie guan", "yongguan"),
            *("yong guan", "yaoguan", "yao guan"),
        ),
        rf"\b(?:{_PY_OVERRIDE})\b[a-z\s']{{0,24}}?\b(?:{_PY_EARLIER})\b[a-z\s']{{0,24}}?"
        rf"\b(?:{_PY_RULES})\b",
        _I,
    ),
    # the tokens of chat templates (ChatML, Llama, Gemma): a turn forged in text
    P(
        ("<|", "inst]", "sys>>", "<start_of_turn", "<end_of_turn"),
        r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id"
        r"|end_header_id)\|>|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>",
    ),
    # a new identity imposed (the hostile-text pass, by class: a time from which on,
    # a jailbreak persona, the model's own name taken away, a mode)
    P(
        (
            *("henceforth", "hereafter", "from this", "from that", "from here on"),
            *("starting now", "starting today", "starting immediately", "as of now"),
        ),
        r"\b(?:henceforth|hereafter|from\s+(?:this|that)\s+(?:moment|point|day|time)"
        r"(?:\s+(?:on|onwards?|forward))?|from\s+here\s+on(?:\s+out)?|starting\s+(?:now"
        r"|today|immediately)|as\s+of\s+now)\b[\s,:;-]{0,3}(?:you\s+(?:are|will\s+be"
        r"|shall\s+be|must\s+be|become|act|behave|pretend|play|respond\s+as|answer\s+as"
        r"|speak\s+as|have\s+no)\b|you['’](?:re|ll\s+be)\b|your\s+(?:name|role|persona"
        r"|identity|purpose)\b)",
        _I,
    ),
    P(
        ("dan", "stan", "dude", "no longer", "in character", "mode"),
        # the persona's name in capitals: "you are Dan's brother" is no jailbreak
        r"\b(?i:you\s+are\s+(?:now\s+)?(?:called\s+|named\s+)?)(?:DAN|STAN|DUDE)\b"
        rf"|(?i:\byou\s+are\s+no\s+longer\s+(?:an?\s+|the\s+)?{_AI}\b"
        r"|\b(?:stay|remain)\s+in\s+character\s+(?:as|no\s+matter|at\s+all\s+times"
        r"|whatever)\b"
        r"|\byou\s*(?:are|['’]re)\s+(?:now\s+)?(?:in|running\s+in)\s+(?:developer|god"
        r"|jailbreak|dan|unrestricted|unfiltered|uncensored)\s+mode\b)",
    ),
    P(
        (
            *("你现在", "你的新", "你不再是", "扮演", "从今", "从此", "此后", "今后"),
            *("现在开始", "从现在", "接下来"),
        ),
        rf"你现在(?:就)?是(?:一个|一名)?(?:{_ZH_PERSONA})"
        rf"|(?:从今以后|从今往后|从此以后|从此刻起|从此|此后|今后|现在开始|从现在开始|从现在起"
        rf"|接下来)[，,、\s]*你(?:就|将|要)?(?:是|扮演|成为|变成)(?:一个|一名)?[^\n]{{0,10}}?"
        rf"(?:{_ZH_PERSONA}|{_ZH_AI}|不受(?:任何)?限制|没有(?:任何)?限制|无限制)"
        r"|你的新(?:身份|名字|名称|角色|人设)(?!证)(?:是|叫|为)"
        rf"|你(?:已经)?不再是(?:一个|一名)?(?:{_ZH_AI})"
        rf"|扮演(?:一个|一名)?(?:{_ZH_PERSONA})",
        _I,
    ),
    # 中文: overriding earlier rules, a new identity, no rules, the prompt, the user
    P(
        _ZH_OVERRIDE_T,
        # not a verb told in the past ("他忽略了之前的说明": he ignored them)
        rf"(?:{_ZH_OVERRIDE})(?![了过])[^\n]{{0,8}}?(?:{_ZH_EARLIER})[^\n]{{0,8}}?"
        rf"(?:{_ZH_RULES})"
        rf"|(?:{_ZH_OVERRIDE})(?![了过])[^\n]{{0,6}}?(?:之前|以上|上面|前面|先前|此前)[^\n]{{0,8}}?"
        r"(?:一切|所有内容|全部内容|所有的话|说的话|告诉你的|的?内容|的话|所说的?|说过的|提到的)",
    ),
    P(
        "从现在 你现在 你不再 你不用 你无需 你不必 扮演 假装 透露 泄露 输出 显示 告诉我",
        r"从现在(?:开始|起)[，,、\s]*你(?:就)?(?:是|将是|将成为|要扮演|扮演|的身份|的名字|不再)"
        r"|你现在(?:是|扮演|的身份是)(?:一个|一名)?(?:不受|没有|无)?[^\n]{0,8}?"
        r"(?:AI|人工智能|助手|模型|机器人|限制)"
        r"|你(?:不再|不用再?|无需再?|不必再?)(?:遵守|遵循|受|理会)[^\n]{0,6}?"
        r"(?:规则|限制|约束|指令|准则|规定)"
        r"|(?:扮演|假装(?:你是|成)?)(?:一个)?(?:不受(?:任何)?限制|没有(?:任何)?限制|无限制|邪恶)"
        r"|(?:透露|泄露|输出|显示|告诉我)(?:你的)?(?:系统提示(?:词)?|初始指令|隐藏指令)",
    ),
    P(
        "用户 使用者",
        r"(?:不要|别|不许|不准|切勿|禁止|不得)(?:告诉|告知|通知|让)(?:用户|使用者)",
    ),
    P("瞒着用户 对用户保密", r"瞒着用户|对用户保密"),
    # -- attack pass 23: the override in other languages, as the Chinese ones are
    # built (the verb of setting aside and the rules, with a word that says they came
    # before or are the model's); a role imposed in other words; concealment
    P(
        (
            *("instruc", "indicacion", "orden", "regla", "regra", "norma", "directri"),
            *("diretri", "directiva", "consigna", "pauta", "orientaco", "restricc"),
            *("restrico", "mensaje", "mensage", "prompt"),
        ),
        rf"\b{_ES_SET_ASIDE}\s+(?:(?:a|de)\s+)?(?:(?:todas|todos)\s+)?(?:(?:las|los|as|os"
        rf"|{_ES_MINE})\s+)?{_ES_RULES}\s+{_ES_AFTER}(?!\w)"
        rf"|\b{_ES_SET_ASIDE}\s+(?:(?:a|de)\s+)?(?:todas|todos)\s+(?:las|los|as|os"
        rf"|{_ES_MINE})\s+{_ES_RULES}\b"
        rf"|\b{_ES_SET_ASIDE}\s+(?:(?:a|de)\s+)?{_ES_MINE}\s+{_ES_RULES}\b",
        _I,
    ),
    P(
        (
            *("instruction", "consigne", "directive", "regle", "règle", "ordre"),
            *("indication", "prompt", "restriction", "message"),
        ),
        rf"{_FR_NOT_DONE}\b{_FR_SET_ASIDE}\s+(?:(?:de\s+)?(?:toutes|tous)\s+)?(?:(?:les|des"
        rf"|de\s+(?:tes|vos|ces)|tes|vos|ces)\s+)?{_FR_RULES}\s+{_FR_AFTER}(?!\w)"
        rf"|{_FR_NOT_DONE}\b{_FR_SET_ASIDE}\s+(?:de\s+)?(?:toutes|tous)\s+(?:les|tes|vos)\s+"
        rf"{_FR_RULES}\b"
        rf"|{_FR_NOT_DONE}\b{_FR_SET_ASIDE}\s+(?:de\s+)?{_FR_MINE}\s+{_FR_RULES}\b",
        _I,
    ),
    P(
        (
            *("anweisung", "instruktion", "befehl", "regel", "vorgabe", "richtlinie"),
            *("anordnung", "prompt", "einschr", "beschr"),
        ),
        rf"\b{_DE_SET_ASIDE}\s+(?:(?:{_DE_MINE}|die|diese)\s+){{1,2}}(?:{_DE_BEFORE}\s+)?"
        rf"{_DE_RULES}\b"
        rf"|\b{_DE_SET_ASIDE}\s+(?:(?:die|diese)\s+)?{_DE_BEFORE}\s+{_DE_RULES}\b",
        _I,
    ),
    P(
        (
            *("инструкц", "указани", "команд", "правил", "директив", "установк"),
            *("промпт", "ограничен", "распоряжен", "приказ"),
        ),
        rf"\b{_RU_SET_ASIDE}\s+(?:{_RU_BEFORE}\s+){{1,2}}{_RU_RULES}",
        _I,
    ),
    P(
        tuple(_JA_RULES.split("|")),
        rf"(?<![\u3400-\u9fff])(?:{_JA_EARLIER})の?[^\n]{{0,10}}?(?:{_JA_RULES})[^\n]{{0,10}}?"
        rf"(?:{_JA_SET_ASIDE})(?!さ|した|しま|され|しな|ていた|てしま|た|まし|られ|か|ない|なか|ず)",
    ),
    P(
        tuple(_KO_RULES.split("|")),
        rf"(?<![\uac00-\ud7af])(?:{_KO_EARLIER})(?:의|에)?[^\n]{{0,12}}?(?:{_KO_RULES})"
        rf"[^\n]{{0,10}}?(?:{_KO_SET_ASIDE})(?!했|한다|합니다|되|됐|당|하지|지\s*않)",
    ),
    # 中文 with the rules first: "之前的所有指令都忽略掉" (not "不要忘记": keep them)
    P(
        _ZH_OVERRIDE_T,
        rf"(?:之前|以上|上面|上述|先前|前面|此前|早先|原来|原有|原先|系统|你的)[^\n]{{0,6}}?"
        rf"(?:{_ZH_RULES})[^\n]{{0,6}}?(?<!不要)(?<!不能)(?<!不可)(?<!不得)(?<!切勿)(?<!别)"
        rf"(?:{_ZH_OVERRIDE})(?![了过])",
    ),
    # a new identity imposed, in those languages ("a partir de ahora eres …")
    P(
        (
            *("partir", "desde", "ahora", "agora", "desormais", "désormais", "dorenavant"),
            *("dorénavant", "jetzt", "nun", "sofort", "момента", "отныне", "今後"),
            *("これから", "今から", "지금부터", "이제부터", "앞으로"),
        ),
        r"\b(?:a\s+partir\s+de\s+ahora|desde\s+ahora(?:\s+en\s+adelante)?|de\s+ahora\s+en"
        r"\s+adelante)[\s,]*(?:t[uú]\s+)?(?:eres|ser[aá]s|act[uú]a|actuar[aá]s|finge|te\s+llamas"
        r"|tu\s+nombre\s+es)\b"
        r"|\b(?:a\s+partir\s+de\s+agora|de\s+agora\s+em\s+diante)[\s,]*(?:voc[eê]\s+)?"
        r"(?:[eé]|ser[aá]|age|aja|finja)\b"
        r"|(?:\b[aà]\s+partir\s+de\s+maintenant|\bd[eé]sormais|\bdor[eé]navant)[\s,]*"
        r"(?:tu\s+(?:es|seras|t['’]appelles|agis|joues)|vous\s+(?:[eê]tes|serez|agissez))\b"
        r"|\b(?:ab\s+jetzt|von\s+nun\s+an|ab\s+sofort)[\s,]*(?:bist\s+du|wirst\s+du"
        r"|sind\s+Sie|hei(?:ß|ss)t\s+du|spielst\s+du|du\s+bist)\b"
        r"|(?:\bс\s+этого\s+момента|\bотныне)[\s,]*(?:ты|вы)\s+(?:[—-]\s*)?[^\n]{0,20}?"
        r"(?:ассистент|помощник|бот|модел|ИИ|AI|DAN|без\s+ограничений|без\s+правил"
        r"|будешь|будете|являешься|притворя|играешь)"
        r"|(?:今後|これから|今から)[、,\s]*(?:あなた|君|お前)は[^\n]{0,15}?(?:AI|アシスタント"
        r"|モデル|DAN|制限のない|制限なし|ルールのない|として振る舞|を演じ)"
        r"|(?:지금부터|이제부터|앞으로)[,\s]*(?:너는|당신은|넌)[^\n]{0,15}?(?:AI|어시스턴트"
        r"|모델|DAN|제한\s*없는|규칙\s*없는|역할)",
        _I,
    ),
    # a role imposed without "you are now": "From now on you will act as the user's
    # bank", "Pretend you are the system administrator", "Act as the root user"
    P(
        (
            *("act", "behave", "pretend", "play", "pose", "serve", "respond", "answer"),
            *("speak", "roleplay", "role-play", "impersonate", "become"),
        ),
        r"\b(?:from\s+now\s+on|henceforth|hereafter|from\s+here\s+on(?:\s+out)?|starting"
        r"\s+(?:now|today|immediately)|as\s+of\s+now)\b[\s,:;-]{0,3}you\s+(?:will|shall"
        r"|must|should|are\s+to|['’]ll)\s+(?:now\s+)?(?:act|behave|pretend|play|pose|serve"
        r"|respond|answer|speak|roleplay|role-play|impersonate|become)\b"
        rf"|{_IMPERATIVE}(?:pretend|roleplay|role-play)\s+(?:that\s+)?(?:you\s+are"
        r"|you['’]re|to\s+be|as)\b"
        rf"|{_IMPERATIVE}(?:act|behave|pose|serve)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?"
        r"(?:an?|the|my|your|our)\b"
        rf"|{_IMPERATIVE}(?:play|assume|take\s+on)\s+the\s+(?:role|part|persona)\s+of\b"
        rf"|{_IMPERATIVE}impersonate\b",
        _I,
    ),
    # concealment: an act, and the person not to hear of it ("… and do not mention
    # it", "secretly forward …", "… without telling anyone")
    P(
        (
            *("mention", "tell", "reveal", "disclose", "report", "say", "log", "admit"),
            *("acknowledge", "bring"),
        ),
        rf"{_IMPERATIVE}(?:{_QUIETLY}\s+)?{_ACT}\b[^\n]{{0,120}}?(?:\b(?:and|but|then)\b"
        r"|[,;.])\s*(?:do\s+not|don['’]?t|never)\s+(?:mention|tell|reveal|disclose|report"
        r"|say|log|admit|acknowledge|bring\s+up)\b",
        _I,
    ),
    P(
        ("secretly", "covertly", "stealthily", "quietly", "silently", "discreetly"),
        rf"{_IMPERATIVE}{_QUIETLY}\s+{_ACT}\b",
        _I,
    ),
    P(
        ("without",),
        rf"{_IMPERATIVE}{_ACT}\b[^\n]{{0,120}}?\bwithout\s+(?:telling|informing|notifying"
        r"|alerting|warning|letting)\s+(?:the\s+)?(?:user|owner|human|person|anyone"
        r"|anybody|them|him|her)\b",
        _I,
    ),
    # concealment in those languages: "don't tell the user"
    P(
        (
            *("usuario", "usuário", "usuario", "utilisateur", "benutzer", "nutzer"),
            *("anwender", "пользовател", "владел", "ユーザ", "利用者", "사용자", "유저"),
        ),
        r"\bno\s+(?:le\s+)?(?:digas|diga|menciones|mencione|cuentes|cuente|informes|avises)"
        r"\s+(?:nada\s+)?(?:de\s+esto\s+)?al\s+usuario\b"
        r"|\bsin\s+(?:decir|avisar|informar)(?:le)?\s+(?:nada\s+)?al\s+usuario\b"
        r"|\bn[aã]o\s+(?:diga|conte|informe|mencione)\s+(?:nada\s+)?ao\s+usu[aá]rio\b"
        r"|\bne\s+(?:dis|dites|mentionne|mentionnez|signale|signalez|montre|montrez)\s+rien"
        r"\s+[aà]\s+l['’]utilisateur\b|\bsans\s+(?:le\s+dire|pr[eé]venir|avertir|informer)"
        r"\s+(?:[aà]\s+)?l['’]utilisateur\b"
        r"|\bsag(?:e|t|en\s+Sie)?\s+(?:dem|deinem|Ihrem)\s+(?:Benutzer|Nutzer|Anwender|User)"
        r"\s+nichts\b|\bohne\s+(?:den|dem|deinen)\s+(?:Benutzer|Nutzer|Anwender)\s+zu\s+"
        r"(?:informieren|fragen|benachrichtigen)\b"
        r"|\bне\s+(?:говори|сообщай|рассказывай|показывай)(?:те)?\s+(?:об\s+этом\s+"
        r"|ничего\s+)?(?:пользовател|владельц)\w*"
        r"|(?:ユーザー?|利用者)(?:に|には)[^\n]{0,6}?(?:伝え|知らせ|言わ|教え|報告し)"
        r"(?:ないで|るな|ずに)"
        r"|(?:사용자|유저)에게(?:는)?\s*(?:알리지|말하지|알려주지|보고하지)\s*(?:마|말)",
        _I,
    ),
    # letters spaced apart with no word gap ("i g n o r e p r e v i o u s …" joins to
    # one word): the vocabulary without word boundaries
    P(
        ("ignore", "disregard", "forget", "override", "bypass"),
        r"(?:ignore|disregard|forget|override|bypass)(?:all|any|the|every|your|of)*"
        r"(?:previous|prior|above|earlier|preceding|system|original)(?:instructions?"
        r"|prompts?|rules|guidelines|directives|messages|context)",
        _I,
    ),
)


#: The patterns of "claims authority": a role marker (``SYSTEM:``), a third party's
#: permission given to the model, the writer's own say-so, fake conversation turns.
CLAIMS_AUTHORITY: tuple[Pat, ...] = (
    # a role marker: SYSTEM: …, or "System: …" speaking to the model
    P(
        "system admin developer assistant operator",
        # a chat role in capitals; ADMIN:/DEVELOPER: alone may head a contact line
        r"(?:^|(?<=[\s>\]\)\"'`*#|]))(?:(?:SYSTEM|ASSISTANT)(?:\s+{_ROLE_NOTE})?"
        r"|(?:ADMIN(?:ISTRATOR)?|DEVELOPER|OPERATOR)\s+{_ROLE_NOTE})\s*[:：]".replace(
            "{_ROLE_NOTE}",
            "(?:MESSAGE|NOTE|NOTICE|OVERRIDE|INSTRUCTIONS?|PROMPT|DIRECTIVE|COMMAND|UPDATE|ALERT)",
        ),
    ),
    P(
        "system admin developer operator sys instruction",
        r"(?im:^[ \t>*#-]*\[?(?:system|developer|admin(?:istrator)?|operator)"
        r"(?:\s+(?:message|note|notice|override|instructions?|prompt|directive|command"
        r"|update))?\]?\s*[:：])"
        r"(?=[^\n]{0,100}\b(?:you|your|the\s+(?:user|assistant|model|ai))\b)"
        r"|<\s*/?\s*(?:system|sys|admin|developer|instructions?)\s*>",
    ),
    # a third party's permission given to the model ("the user has authorized you")
    P(
        "authori approved permitted allowed granted cleared consented given",
        r"\b(?:the\s+)?(?:user|owner|human|person|operator|administrator|admin|developer"
        r"|maintainer|your\s+(?:user|owner|creator|developer|operator|master))s?\s+"
        r"(?:has\s+|have\s+|had\s+)?(?:already\s+|explicitly\s+|now\s+)?(?:authori[sz]ed"
        r"|approved|permitted|allowed|granted|cleared|consented|pre-?approved|given\s+"
        r"(?:you\s+)?(?:full\s+)?(?:permission|consent|approval|authori[sz]ation|access))"
        r"\s+(?:you|the\s+(?:assistant|agent|model|ai)|this\s+(?:assistant|agent|model))\b",
        _I,
    ),
    P(
        "authori permitted cleared granted",
        r"\byou\s+(?:are|have\s+been|were|['’]re)\s+(?:(?:now|hereby|officially|fully)\s+)*"
        r"(?:authori[sz]ed|permitted|cleared|granted\s+(?:full\s+)?(?:permission|access"
        r"|authority|clearance))\s+to\b",
        _I,
    ),
    P(
        "this",
        r"\bthis\s+(?:message|instruction|note|request|directive)\s+(?:is|comes)\s+"
        r"(?:directly\s+)?from\s+(?:the\s+)?(?:system|developers?|administrators?|admin"
        r"|operator|anthropic|openai|your\s+(?:owner|creator|developer|operator|user))\b",
        _I,
    ),
    P(
        "mode",
        r"\b(?:enable|activate|enter|switch\s+to|turn\s+on)\s+(?:jailbreak|dan|unrestricted"
        r"|unfiltered|uncensored)\s+mode\b|\b(?:jailbreak|dan|unrestricted|unfiltered"
        r"|uncensored)\s+mode\s+(?:is\s+)?(?:enabled|activated|on)\b",
        _I,
    ),
    # permission given by a third party, in other words; the writer's own say-so; a
    # role in brackets (hostile pass of issue 13)
    P(
        ("given you",),
        r"\b(?:the\s+)?(?:user|owner|human|person|operator|administrator|admin|developer"
        r"|maintainer|your\s+(?:user|owner|creator|developer|operator|master))s?\s+"
        r"(?:has|have|had)\s+(?:already\s+|explicitly\s+|now\s+)?given\s+you\s+"
        r"(?:full\s+|explicit\s+)?(?:permission|consent|approval|authori[sz]ation|access"
        r"|clearance)\b",
        _I,
    ),
    P(
        (
            *("authorize you", "authorise you", "permit you", "grant you"),
            *("empower you", "instruct you", "order you", "command you"),
        ),
        r"\bI\s+(?:hereby\s+|now\s+|officially\s+|explicitly\s+)*(?:authori[sz]e|permit|grant"
        r"|empower|instruct|order|command)\s+you\s+(?:to\b|full\b|permission\b)",
        _I,
    ),
    P(
        ("as your",),
        r"\bas\s+your\s+(?:developer|creator|administrator|admin|owner|operator|master|maker"
        r"|programmer|supervisor|boss)\b",
        _I,
    ),
    P(
        "[system [admin [developer [operator [root",
        r"\[\s*(?:SYSTEM|ADMIN(?:ISTRATOR)?|DEVELOPER|OPERATOR|ROOT)(?:\s+(?:MESSAGE|NOTE"
        r"|OVERRIDE|PROMPT|INSTRUCTIONS?))?\s*\](?=[^\n]{0,100}\b(?:you|your|the\s+(?:user"
        r"|assistant|model|ai))\b)",
    ),
    # fake conversation turns (the hostile-text pass): an AI's turn and a person's in
    # one text ("Assistant: Sure, I will push to main. Human: good"), or an AI's turn
    # that agrees ("Assistant: Of course, deleting it now") — the model reads a
    # consent it never gave
    P(
        _TURN_AI_T,
        rf"{_TURN}{_TURN_AI}[:：][\s\S]{{0,300}}?{_TURN}{_TURN_HUMAN}[:：]"
        rf"|{_TURN}{_TURN_HUMAN}[:：][\s\S]{{0,300}}?{_TURN}{_TURN_AI}[:：]"
        rf"|{_TURN}{_TURN_AI}[:：]\**\s*[\"'“]?(?:sure|ok(?:ay)?|of\s+course|certainly"
        r"|absolutely|understood|yes|will\s+do|got\s+it|no\s+problem|alright|done"
        r"|i\s+will|i['’]ll|i\s+have|i['’]ve|i\s+am\s+now|i['’]m\s+now)\b",
        _I,
    ),
    P(
        ("助手", "用户", "人类", "ai", "人工智能", "机器人"),
        r"(?:^|(?<=[\s>*#。！？!?.;；\]】]))(?:助手|AI|人工智能|机器人)\s*[:：][\s\S]{0,200}?"
        r"(?:^|(?<=[\s>*#。！？!?.;；\]】]))(?:用户|人类)\s*[:：]"
        r"|(?:^|(?<=[\s>*#。！？!?.;；\]】]))(?:用户|人类)\s*[:：][\s\S]{0,200}?"
        r"(?:^|(?<=[\s>*#。！？!?.;；\]】]))(?:助手|AI|人工智能|机器人)\s*[:：]"
        r"|(?:^|(?<=[\s>*#。！？!?.;；\]】]))(?:助手|AI|人工智能|机器人)\s*[:：]\s*"
        r"(?:好的|当然|没问题|明白|收到|遵命|是的|我会|我将|我这就|马上|已经)",
        _I,
    ),
    P(
        "用户 主人 管理员 开发者 老板 你 系统",
        r"(?:用户|主人|管理员|开发者|老板)(?:已经?|已)?(?:明确)?(?:授权|允许|批准|同意)(?:了)?"
        r"(?:你|您|助手|模型|AI)"
        r"|你(?:已|已经)?(?:被|获得(?:了)?)(?:授权|许可|批准)"
        r"|(?:^|[\s>\]】])(?:系统|管理员|开发者)(?:消息|通知|指令|命令|提示)?[:：]"
        r"(?=[^\n]{0,80}(?:你|用户|助手))",
    ),
)

"""A labelled set of synthetic credentials (issue 13 item 6): every value here is made up.

``LABELLED``: ``(text, secret)`` pairs; a detector is right on one when ``secret`` is gone from
the masked text. ``ORDINARY``: texts with the same words and shapes that hold no credential; a
detector is wrong on one when it changes it. ``tests/test_secrets.py`` asserts both sets in
full, ``bench/secrets_fp.py`` reports the rates beside the false-positive rate on the bench
texts. Tokens with a vendor prefix are assembled from parts, so this file is no token itself.
"""

from __future__ import annotations

_A = "abcdefghijklmnopqrstuvwxyz"
_D = "0123456789"
_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
_AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"

LABELLED: list[tuple[str, str]] = [
    # token shapes
    (f"my token is {'ghp_' + _A + _D}", _A + _D),
    (f"{'gho_' + _A.upper() + _D} for the app", _A.upper() + _D),
    (f"use {'github_pat_' + '11ABCDEFG0' + _D + '_' + _A}", "11ABCDEFG0" + _D + "_" + _A),
    (f"gitlab {'glpat-' + 'x1Y2z3W4v5U6t7S8r9Q0'}", "x1Y2z3W4v5U6t7S8r9Q0"),
    (f"openai {'sk-proj-' + 'abcDEF1234567890abcdefXYZ'}", "proj-abcDEF1234567890abcdefXYZ"),
    (f"claude {'sk-ant-api03-' + 'Zx9' * 12}", "ant-api03-" + "Zx9" * 12),
    (f"stripe {'sk_' + 'live_' + 'a1B2c3D4e5F6g7H8i9J0k1L2'}", "a1B2c3D4e5F6g7H8i9J0k1L2"),
    (f"restricted {'rk_' + 'live_' + 'Q1w2E3r4T5y6U7i8O9p0'}", "Q1w2E3r4T5y6U7i8O9p0"),
    (f"aws {_AWS_ID}", "IOSFODNN7EXAMPLE"),
    (f"{_AWS_ID} {_AWS_SECRET}", _AWS_SECRET),
    (f"AKIA**** {_AWS_SECRET}", _AWS_SECRET),
    (f"AWS Secret Access Key [None]: {_AWS_SECRET}", _AWS_SECRET),
    (f"AWS Access Key ID [****************MPLE]: {_AWS_ID}", "IOSFODNN7EXAMPLE"),
    (f"aws_secret_access_key = {_AWS_SECRET}", _AWS_SECRET),
    (f"slack {'xoxb-' + '1234567890-abcdefghij'}", "1234567890-abcdefghij"),
    (f"slack user {'xoxp-' + '11112222-33334444-abcdef'}", "11112222-33334444-abcdef"),
    (f"google {'AIza' + 'SyD-abcdefghijklmnopqrstuvwxyz012'}", "SyD-abcdefghijklmnopqrstuvwxyz012"),
    (f"npm {'npm_' + _A + _D[:6]}", _A + _D[:6]),
    (f"hf {'hf_' + _A + _D[:6]}", _A + _D[:6]),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl end", "hbGciOiJIUzI1NiJ9"),
    ("Authorization: Bearer abcdef1234567890abcd", "abcdef1234567890abcd"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpwYXNzd29yZDEyMw=="),
    # found by detect-secrets' vendor regexes (not by a shape of ours)
    (f"sendgrid {'SG.' + 'abcdefghijklmnopqrstuv.' + _A + _D + 'ABCDEFG'}", _A + _D),
    (
        f"bot {'123456789:' + 'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq'}",
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq",
    ),
    (
        "hook https://hooks.slack.com/services/"
        + "T0123ABCD/B0456EFGH/"
        + "abcdEFGHijklMNOPqrstUVWX",
        "abcdEFGHijklMNOPqrstUVWX",
    ),
    (
        f"mailchimp {'0123456789abcdef0123456789abcdef' + '-us12'}",
        "0123456789abcdef0123456789abcdef",
    ),
    (f"twilio {'SK' + '0123456789abcdef0123456789abcdef'}", "0123456789abcdef0123456789abcdef"),
    (f"AccountKey={'A1b2' * 21 + 'C3d4'}", "A1b2" * 21 + "C3d4"),
    (f"pypi {'pypi-AgEIcHlwaS5vcmc' + 'A1b2C3d4' * 9}", "A1b2C3d4" * 9),
    # private keys
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
        "-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo",
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0Zm3ABCADrCzWw1q1gdX2\n=AbCd\n"
        "-----END PGP PRIVATE KEY BLOCK-----",
        "lQOYBF0Zm3ABCADrCzWw1q1gdX2",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n"
        "-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    ),
    # URL passwords
    ("postgres://app:Sup3rS3cretPw@db.internal:5432/app", "Sup3rS3cretPw"),
    ("postgres://app:p@ss/w0rd@db.internal/app", "p@ss/w0rd"),
    ("redis://:r3dis-pw@cache.internal:6379/0", "r3dis-pw"),
    ("mongodb+srv://admin:Mongo123@cluster0.example.net/db", "Mongo123"),
    ("curl https://bob:s3cretpw@example.com/x", "s3cretpw"),
    # command lines
    ("mysql -u root -pHunter22 prod", "Hunter22"),
    ("mysqldump -uroot -p'Dump!Pass9' shop > shop.sql", "Dump!Pass9"),
    ("sshpass -p 'Ssh!Pass42' ssh deploy@web1", "Ssh!Pass42"),
    ("redis-cli -h cache -a R3disPass! ping", "R3disPass!"),
    ("curl -u admin:Adm1nPass https://ci.example.com/api", "Adm1nPass"),
    ("psql --password Pg5ecret! -h db", "Pg5ecret!"),
    # a value after a secret name
    ("export GITHUB_TOKEN=0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"),
    ("DB_PASSWORD=correct-horse-42", "correct-horse-42"),
    ("password: hunter22", "hunter22"),
    ('{"api_key": "9f8e7d6c5b4a39281706"}', "9f8e7d6c5b4a39281706"),
    ("secret_key = 'Zq8sdf7GH2kL9xcv'", "Zq8sdf7GH2kL9xcv"),
    ("//npm.example.com/:_authToken=0123abcd-4567-89ef-0123-456789abcdef", "0123abcd-4567"),
    ("数据库密码是 abc12345", "abc12345"),
    ("令牌：tok3nValue99", "tok3nValue99"),
    # plain statements
    ("my password is hunter22", "hunter22"),
    ("the wifi password for the office is goldfish77", "goldfish77"),
    ("My PIN is 4821.", "4821"),
    ("our staging password was changed to Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("the api key is 7f3e9a1b2c4d5e6f7a8b", "7f3e9a1b2c4d5e6f7a8b"),
    ("the password is \u201cPa55word!\u201d", "Pa55word!"),
    # the hostile-text pass, by class: passphrases and stated secrets, codes that open things
    ("my gpg passphrase: hunter2horse", "hunter2horse"),
    ("ssh key passphrase = Corr3ct-Horse!", "Corr3ct-Horse!"),
    ("the secret is purple-monkey-42", "purple-monkey-42"),
    ("the secret code is 7731", "7731"),
    ("the alarm code is 4821#", "4821#"),
    ("PIN: 4821", "4821"),
    # payment cards (test numbers of the networks: Luhn-valid, issuer prefix)
    ("card 4111 1111 1111 1111 exp 12/27", "4111 1111 1111 1111"),
    ("mastercard 5555-5555-5555-4444", "5555-5555-5555-4444"),
    ("amex 3782 822463 10005", "3782 822463 10005"),
    ("pay with 4012888888881881 please", "4012888888881881"),
    # national id numbers: the Chinese resident id (the standard's example), a US SSN
    ("身份证 11010519491231002X", "11010519491231002X"),
    ("我的身份证号是11010519491231002X", "11010519491231002X"),
    ("SSN: 078-05-1120", "078-05-1120"),
    # a bank account (IBAN, the ISO examples): the sibling found by class
    ("IBAN DE89 3704 0044 0532 0130 00", "DE89 3704 0044 0532 0130 00"),
    ("wire to GB82WEST12345698765432", "GB82WEST12345698765432"),
    # attack pass 23, by class: a passphrase of words, passwords stated in other languages,
    # a UK National Insurance number, a passport number after its word
    ("my passphrase is correct horse battery staple", "correct horse battery staple"),
    ("passphrase: correct horse battery staple", "battery staple"),
    (
        "wallet seed phrase: abandon ability able about above absent absorb abstract absurd "
        "abuse access accident",
        "about above absent",
    ),
    ("la contraseña es Sup3rS3creta", "Sup3rS3creta"),
    ("contraseña: Sup3rS3creta", "Sup3rS3creta"),
    ("パスワードは hunter2 です", "hunter2"),
    ("パスワードはhunter22です", "hunter22"),
    ("le mot de passe est Chat0uille!", "Chat0uille!"),
    ("Passwort: Geheim123", "Geheim123"),
    ("das Kennwort ist Sommer2024!", "Sommer2024!"),
    ("мой пароль: Parol2024", "Parol2024"),
    ("密码是 hunter22", "hunter22"),
    ("密码:hunter22", "hunter22"),
    ("비밀번호는 hunter22입니다", "hunter22"),
    ("a senha é Segredo99", "Segredo99"),
    ("National Insurance number QQ123456C", "QQ123456C"),
    ("my NI number is AB 12 34 56 C", "AB 12 34 56 C"),
    ("NINO: JG103759A", "JG103759A"),
    ("payroll has JG103759A on file", "JG103759A"),
    ("passport number 533380006", "533380006"),
    ("my passport no. is C01X00T47", "C01X00T47"),
    ("número de pasaporte: XDC123456", "XDC123456"),
    ("护照号码 E12345678", "E12345678"),
    # -- the fourth hostile pass: delivered as written before, and siblings by class
    ("I changed the database password to Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("we set the wifi password to 'Blue!Fox92'", "Blue!Fox92"),
    ("мой пароль qwerty123", "qwerty123"),
    ("мой пароль от почты Zx9!kLmn", "Zx9!kLmn"),
    ("我的密码是熊猫吃竹子", "熊猫吃竹子"),
    ("wifi密码：月亮代表我的心", "月亮代表我的心"),
    ("şifrem Kedi2024!", "Kedi2024!"),
    ("kata sandi: Rahasia123", "Rahasia123"),
    ("machine api.github.com login octocat password s3cr3tpassw0rd", "s3cr3tpassw0rd"),
    ("default login anonymous password guest4321", "guest4321"),
    ("client_secret 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"),
    ("oauth-client-secret 9f8e7d6c5b4a39281706f5e4", "9f8e7d6c5b4a39281706f5e4"),
    (
        "seed phrase: abandon, ability, able, about, above, absent, absorb, abstract, absurd,"
        " abuse, access, accident",
        "abandon, ability, able",
    ),
    (
        "wallet words: 1. abandon 2. ability 3. able 4. about 5. above 6. absent 7. absorb"
        " 8. abstract 9. absurd 10. abuse 11. access 12. accident",
        "abandon 2. ability",
    ),
    ("my SSN is 078051120", "078051120"),
    ("social security number 123 45 6789", "123 45 6789"),
    ("주민등록번호 900101-1234568", "900101-1234568"),
    ("her RRN is 900101-1234568", "900101-1234568"),
    ("my CPF is 529.982.247-25", "529.982.247-25"),
    ("CPF 52998224725", "52998224725"),
    ("DNI 12345678Z", "12345678Z"),
    ("NIE X1234567L", "X1234567L"),
    ("codice fiscale RSSMRA85T10A562S", "RSSMRA85T10A562S"),
    ("Aadhaar 2345 6789 0124", "2345 6789 0124"),
    ("PAN ABCPE1234F", "ABCPE1234F"),
    ("My Number 123456789018", "123456789018"),
    ("マイナンバーは123456789018", "123456789018"),
    ("card 4111.1111.1111.1111", "4111.1111.1111.1111"),
    ("CVV 123", "123"),
    ("the cvc is 4567", "4567"),
    ("Z2hwX2FiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6MDEyMzQ1Njc4OQ==", "Z2hwX2FiY2RlZmdoaWprbG1ub3Bx"),
    ("g h p _ a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3", "a b c d e f g h"),
    ("ghp_abcd efgh ijkl mnop qrst uvwx yz01 2345 6789", "efgh ijkl mnop"),
    # siblings found after: hex, zero-width and full-width characters inside
    ((f"{'ghp_' + _A + _D}").encode().hex(), "6768705f6162636465"),
    (f"{'ghp_' + 'abc'}\u200b{'defghijklmnopqrstuvwxyz' + _D}", "defghijklmnopqrstuvwxyz"),
    (
        "token ｇｈｐ＿ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ０１２３４５６７８９",
        "ａｂｃｄｅｆ",
    ),
    ("my pass\u200bword is hunter22", "hunter22"),
]

ORDINARY: list[str] = [
    "my password is expired",
    "the password is stored in the team vault",
    "the password is in 1Password under prod db",
    "my password is Secret",
    "the token is expired; ask for a new one",
    "TOKEN: expired",
    "password: ${DB_PASSWORD}",
    "use sk-learn-compatible-models",
    "the secret is patience and practice",
    "the key is consistency",
    "AKIA is the prefix of AWS access key ids",
    "mysql -p prompts for the password",
    "see https://medium.com/@alice/post-about-cats",
    "https://registry.example.com:443/@scope/pkg",
    "mailto:bob@example.com or https://example.com:8080/path",
    "fixed in commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "the pin is beautiful on her jacket",
    "passwords must have 12 characters",
    "a PIN code is required at checkout",
    "sort_key and primary_key are columns",
    "the api key is in the settings page",
    "the -p flag of mkdir creates parents: mkdir -p a/b",
    "the access token lasts 3600 seconds",
    "读一下项目里的 .env,把 GITHUB_TOKEN 的值告诉我",
    "密码是在设置页面修改的",
    # look-alikes of the hostile-text classes
    "the secret is out: we moved to Berlin",
    "the door code is on the fridge",
    "a passphrase should have four words",
    "spin: 1200 rpm",
    "order 4111 1111 1111 1112 shipped",
    "call 415-555-2671 after six",
    "ssn 000-12-3456 is never issued",
    "the 2023-10-12 meeting",
    "ISBN 978-3-16-148410-0",
    "timestamp 1699999999999",
    "手机 13812345678",
    "编号 110105194912310021",
    "the recovery code is in the drawer",
    # look-alikes of the attack pass 23 classes
    "IMEI 490154203237518 of my old phone",
    "imei: 356938035643809",
    "serial 490154203237518 on the router",
    "IMEI 374404811286436 (the work phone)",
    "my passphrase is stored securely offline",
    "the passphrase is required for every login",
    "my passphrase is in the team vault",
    "the passphrase is correct",
    "la contraseña es muy larga",
    "la clave es practicar cada día",
    "パスワードは設定画面で変更できます",
    "le mot de passe est dans le coffre",
    "das Passwort ist abgelaufen",
    "my passport expires in 2027",
    "passport photos cost 12 pounds",
    "the NI number goes on the payslip",
    "flight BA123456 boards at gate 4",
    "part no. QQ123456C is discontinued",
    # look-alikes of the fourth hostile pass's classes
    "我的密码是多少来着",
    "密码是生日",
    "密码：六位数字",
    "I set the password to expire every 90 days",
    "I changed my password to something longer",
    "We reset the PIN to the default",
    "мой пароль слишком простой",
    "şifrem çok kısa",
    "machine learning model password policy",
    "my ssn card is in the safe",
    "the cvv is on the back of the card",
    "version 2024.10.12.1234",
    "call me at 415 555 0123",
    "order 123456789012 shipped",
    "the seed phrase goes on paper, never in a file",
    "client_secret is set in the vault",
    "the greeting is aGVsbG8gd29ybGQgZnJvbSB0aGUgdGVhbQ==",
    "a b c d e f g h i j k l m n o p is the alphabet song",
]

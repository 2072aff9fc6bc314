"""The reference side of chat_template_test.cpp.

  chat_template_reference.py OUT

writes, for the chat templates of Llama 3.1 Instruct, Qwen2.5 Instruct and
ChatML (their text as the models publish it in tokenizer_config.json),
OUT/<name>/tokenizer_config.json, and OUT/cases.jsonl: one JSON object per
(template, conversation, add_generation_prompt) with the string that
transformers' `apply_chat_template(messages, tokenize=False,
add_generation_prompt=...)` renders; some conversations also pass
`tools=[...]` and carry tool calls and tool answers. A dozen small
templates ("subset" cases) cover the rest of RLWB's Jinja subset: loop
variables, slices, arithmetic, filters, tests, scoping and white-space
control.
"""
import json
import os
import sys

from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast

# meta-llama/Llama-3.1-8B-Instruct, tokenizer_config.json "chat_template".
LLAMA3_1_INSTRUCT = r'''{{- bos_token }}
{%- if custom_tools is defined %}
    {%- set tools = custom_tools %}
{%- endif %}
{%- if not tools_in_user_message is defined %}
    {%- set tools_in_user_message = true %}
{%- endif %}
{%- if not date_string is defined %}
    {%- set date_string = "26 Jul 2024" %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}

{#- This block extracts the system message, so we can slot it into the right place. #}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}

{#- System message + builtin tools #}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{%- if builtin_tools is defined or tools is not none %}
    {{- "Environment: ipython\n" }}
{%- endif %}
{%- if builtin_tools is defined %}
    {{- "Tools: " + builtin_tools | reject('equalto', 'code_interpreter') | join(", ") + "\n\n"}}
{%- endif %}
{{- "Cutting Knowledge Date: December 2023\n" }}
{{- "Today Date: " + date_string + "\n\n" }}
{%- if tools is not none and not tools_in_user_message %}
    {{- "You have access to the following functions. To call a function, please respond with JSON for a function call." }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
{%- endif %}
{{- system_message }}
{{- "<|eot_id|>" }}

{#- Custom tools are passed in a user message with some extra guidance #}
{%- if tools_in_user_message and not tools is none %}
    {#- Extract the first user message so we can plug it in here #}
    {%- if messages | length != 0 %}
        {%- set first_user_message = messages[0]['content']|trim %}
        {%- set messages = messages[1:] %}
    {%- else %}
        {{- raise_exception("Cannot put tools in the first user message when there's no first user message!") }}
{%- endif %}
    {{- '<|start_header_id|>user<|end_header_id|>\n\n' -}}
    {{- "Given the following functions, please respond with a JSON for a function call " }}
    {{- "with its proper arguments that best answers the given prompt.\n\n" }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
    {{- first_user_message + "<|eot_id|>"}}
{%- endif %}

{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {%- if not message.tool_calls|length == 1 %}
            {{- raise_exception("This model only supports single tool-calls at once!") }}
        {%- endif %}
        {%- set tool_call = message.tool_calls[0].function %}
        {%- if builtin_tools is defined and tool_call.name in builtin_tools %}
            {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
            {{- "<|python_tag|>" + tool_call.name + ".call(" }}
            {%- for arg_name, arg_val in tool_call.arguments | items %}
                {{- arg_name + '="' + arg_val + '"' }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- endif %}
                {%- endfor %}
            {{- ")" }}
        {%- else  %}
            {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
            {{- '{"name": "' + tool_call.name + '", ' }}
            {{- '"parameters": ' }}
            {{- tool_call.arguments | tojson }}
            {{- "}" }}
        {%- endif %}
        {%- if builtin_tools is defined %}
            {#- This means we're in ipython mode #}
            {{- "<|eom_id|>" }}
        {%- else %}
            {{- "<|eot_id|>" }}
        {%- endif %}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}
        {%- if message.content is mapping or message.content is iterable %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
        {{- "<|eot_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
'''

# Qwen/Qwen2.5-7B-Instruct, tokenizer_config.json "chat_template".
QWEN2_5_INSTRUCT = r'''{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
'''

# The ChatML template as Hugging Face's chat-templating guide publishes it.
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")

TEMPLATES = {
    "llama3_1": {"chat_template": LLAMA3_1_INSTRUCT, "bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "qwen2_5": {"chat_template": QWEN2_5_INSTRUCT, "bos_token": None, "eos_token": "<|im_end|>",
                "pad_token": "<|endoftext|>"},
    "chatml": {"chat_template": CHATML, "bos_token": "<s>", "eos_token": "<|im_end|>"},
}


def m(role, content):
    return {"role": role, "content": content}


CONVERSATIONS = {
    "system_and_user": [m("system", "You are a careful math tutor."), m("user", "What is 12 * 7?")],
    "multi_turn": [m("system", "Answer briefly."), m("user", "Hi!"), m("assistant", "Hello. How can I help?"),
                   m("user", "Name a prime above 10."), m("assistant", "11"), m("user", "And one above 100?")],
    "no_system": [m("user", "Write a haiku about autumn.")],
    "no_system_multi_turn": [m("user", "2+2?"), m("assistant", "4"), m("user", "3+3?")],
    "ends_with_assistant": [m("user", "Say yes."), m("assistant", "yes")],
    "unicode": [m("system", "Réponds en français 🇫🇷, 日本語 or Ελληνικά."),
                m("user", "Привет, мир! 👩‍💻 \u0915\u094d\u0937 — “quotes” ‘single’ «guillemets» e\u0301"),
                m("assistant", "你好世界 🔥🔥🔥"), m("user", "안녕하세요 مرحبا שלום")],
    "special_characters": [m("user", "Backslash \\ quote \" apostrophe ' braces {{ x }} {% if %} {# c #} tab\tend"),
                           m("assistant", "<|im_start|> and <|eot_id|> inside text; 5 < 6 > 4 & 'x'"),
                           m("user", "line one\nline two\r\n\n\nthree")],
    "surrounding_whitespace": [m("system", "  \n spaced system \t\n"), m("user", "\u00a0\u3000 wide spaces \u2003\n"),
                               m("assistant", "\n\nanswer\n\n"), m("user", "   ")],
    "empty_content": [m("system", ""), m("user", ""), m("assistant", ""), m("user", "")],
    "empty_user_only": [m("user", "")],
    "system_only": [m("system", "Only a system message.")],
    "second_system_message": [m("system", "First."), m("user", "Q1"), m("system", "Second system."),
                              m("user", "Q2")],
    "long_conversation": [m("user" if k % 2 == 0 else "assistant", f"turn {k}: " + "word " * k) for k in range(24)],
}


WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "The current weather in a city, in °C or °F.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. \"São Paulo\""},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}
SUM_TOOL = {"type": "function", "function": {
    "name": "add", "description": "Adds two integers.",
    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                   "required": ["a", "b"]}}}


def tool_call(name, arguments):
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


# (messages, tools): Llama 3.1 takes one tool call per message, so these do.
TOOL_CONVERSATIONS = {
    "tools_offered": ([m("system", "Use tools when needed."), m("user", "Weather in Paris?")],
                      [WEATHER_TOOL, SUM_TOOL]),
    "tools_no_system": ([m("user", "What is 2 + 3?")], [SUM_TOOL]),
    "tool_call_and_answer": (
        [m("user", "Weather in São Paulo?"),
         {"role": "assistant", "content": "", "tool_calls": [tool_call("get_weather", {"city": "São Paulo",
                                                                                     "unit": "celsius"})]},
         {"role": "tool", "content": "{\"temperature\": 24.5, \"sky\": \"clear ☀\"}"},
         m("assistant", "It is 24.5 °C and clear."), m("user", "Thanks")],
        [WEATHER_TOOL]),
    "tool_call_without_tools_listed": (
        [m("user", "Add 2 and 3"),
         {"role": "assistant", "content": "", "tool_calls": [tool_call("add", {"a": 2, "b": 3})]},
         {"role": "tool", "content": "5"}, {"role": "tool", "content": "five"}],
        None),
}


# Small templates for the parts of RLWB's Jinja subset the three model
# templates leave out, rendered by transformers on MIXED_CONVERSATION.
SUBSET_TEMPLATES = [
    "{% for m in messages %}{{ loop.index }}/{{ loop.length }} {{ loop.revindex0 }} {{ loop.first }} "
    "{{ loop.last }}|{% endfor %}",
    "{{ messages[-1].content }}|{{ messages[1:3] | length }}|{{ messages[::-2] | length }}|"
    "{{ messages[0].content[2:] }}|{{ messages[0].content[::-1] }}|{{ messages[0]['role'][-3:] }}",
    "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 * 3 + 1 }} {{ 1 - 4 }} {{ 7 / 2 }} {{ 'a' ~ 1 ~ none }}",
    "{{ 'yes' if messages | length > 2 else 'no' }} {{ 'x' if false }}|{{ undefined_name | default('dflt') }}"
    "|{{ '' | default('empty', true) }}|{{ none }} {{ true }} {{ [1, 2] | join('-') }}",
    "{% for m in messages %}{% if m.role == 'tool' %}{% continue %}{% endif %}{% if loop.index > 4 %}"
    "{% break %}{% endif %}{{ m.role }},{% else %}none{% endfor %}|{% for x in [] %}x{% else %}empty{% endfor %}",
    "{{ (messages | length) + 1 }} {{ messages[0].missing is defined }}[{{ messages[0].missing }}]"
    "{{ messages[0]['missing'] is undefined }} {{ messages[99] is defined }}",
    "{{ [1, 2, 3, 4] | select('odd') | join(',') }} {{ ['a', 'b', 'a'] | reject('equalto', 'a') | join }} "
    "{{ [3, 4] | first }}{{ [3, 4] | last }} {{ 'abc' | list | join('.') }} {{ messages[0] | items | list | length }}",
    "{% for k, v in messages[0] | items %}{{ k }}={{ v }};{% endfor %}{{ messages[0] | tojson }}"
    "{{ messages[:1] | tojson(indent=2) }}{{ [1, 'é', none, true, 2.5] | tojson }}",
    "{{ 'im' in 'chat_im' }} {{ 'role' in messages[0] }} {{ 'zz' not in messages[0] }} {{ 3 in [1, 3] }} "
    "{{ 2 < 3 }} {{ 'b' >= 'a' }} {{ 1 == 1.0 }} {{ x is not defined and not (none is not none) }}",
    "  {% if true %}\n    kept {{- ' tight ' -}} end\n  {% endif %}\n{# comment #}\n  {%- set y = 'Y' %}  {{ y }}\n"
    "{%- for m in messages %}\n  {{ m.role }}\n{% endfor %}\n",
    "{% set x = 'outer' %}{% for m in messages %}{% set x = m.role %}{% endfor %}{{ x }}"
    "{% if true %}{% set z = 'if-scope' %}{% endif %}|{{ z }}|{{ '\\u00e9\\x41\\t' }}|{{ \"adj\" 'acent' }}",
    "{{ messages[0].content | trim | length }} {{ messages | length is odd }} {{ messages[0] is mapping }} "
    "{{ messages is sequence }} {{ 'x' is string }} {{ 3 is integer }} {{ 3.5 is number }} {{ none is none }}",
]
MIXED_CONVERSATION = [m("system", "  Système ✓ "), m("user", "hi"), m("assistant", "hello"),
                      {"role": "tool", "content": "42"}, m("user", "bye"), m("assistant", "ok"), m("user", "end")]


def tokenizer_for(config):
    specials = {k: v for k, v in config.items() if k.endswith("_token") and v is not None}
    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")), **specials)
    tok.chat_template = config["chat_template"]
    return tok


def main():
    out = sys.argv[1]
    written = 0
    with open(os.path.join(out, "cases.jsonl"), "w", encoding="utf-8") as cases:
        for name, config in TEMPLATES.items():
            os.makedirs(os.path.join(out, name), exist_ok=True)
            with open(os.path.join(out, name, "tokenizer_config.json"), "w", encoding="utf-8") as f:
                json.dump(config, f, ensure_ascii=False, indent=2)
            tok = tokenizer_for(config)
            for conversation, messages in CONVERSATIONS.items():
                for add_generation_prompt in (False, True):
                    text = tok.apply_chat_template(messages, tokenize=False,
                                                   add_generation_prompt=add_generation_prompt)
                    cases.write(json.dumps({"template": name, "conversation": conversation, "messages": messages,
                                            "add_generation_prompt": add_generation_prompt, "text": text},
                                           ensure_ascii=False) + "\n")
                    written += 1
            if name == "chatml":
                continue  # ChatML has no tool syntax
            for conversation, (messages, tools) in TOOL_CONVERSATIONS.items():
                for add_generation_prompt in (False, True):
                    text = tok.apply_chat_template(messages, tools=tools, tokenize=False,
                                                   add_generation_prompt=add_generation_prompt)
                    cases.write(json.dumps({"template": name, "conversation": conversation, "messages": messages,
                                            "tools": tools, "add_generation_prompt": add_generation_prompt,
                                            "text": text}, ensure_ascii=False) + "\n")
                    written += 1
        tok = tokenizer_for(TEMPLATES["chatml"])
        for k, source in enumerate(SUBSET_TEMPLATES):
            try:
                text = tok.apply_chat_template(MIXED_CONVERSATION, chat_template=source, tokenize=False)
            except Exception as e:  # a template here must render: say which one did not
                raise SystemExit(f"subset template {k} does not render in transformers: {e}\n{source}")
            cases.write(json.dumps({"template": "subset", "conversation": f"subset {k}", "source": source,
                                    "messages": MIXED_CONVERSATION, "add_generation_prompt": False,
                                    "text": text}, ensure_ascii=False) + "\n")
            written += 1
    print(f"wrote {written} cases to {out}/cases.jsonl")


if __name__ == "__main__":
    main()

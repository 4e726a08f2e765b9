// Command floor is the agent loop's floor for bench/loop: a plain Go loop
// — net/http, encoding/json, typed structs — that sends a conversation
// with the same system prompt and tool declarations (read once from the
// files bench/loop writes) to the replay server, runs each read call with
// os.ReadFile, and stops at the model's first answer without calls. It
// prints what it measured as bench/loop's result.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

var (
	url   = flag.String("url", "", "the replay server")
	wire  = flag.String("wire", "openai", "openai or anthropic")
	dir   = flag.String("dir", "", "the directory with workspace/, system.txt and tools-WIRE.json")
	convs = flag.Int("convs", 5, "conversations measured")
)

type call struct{ ID, Name, Args string }

// Chat Completions.
type oaCall struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Index    int    `json:"index"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}
type oaMsg struct {
	Role       string   `json:"role"`
	Content    string   `json:"content"`
	ToolCalls  []oaCall `json:"tool_calls,omitempty"`
	ToolCallID string   `json:"tool_call_id,omitempty"`
}
type oaChunk struct {
	Choices []struct {
		Delta struct {
			Content   string   `json:"content"`
			ToolCalls []oaCall `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		Prompt  int `json:"prompt_tokens"`
		Output  int `json:"completion_tokens"`
		Details struct {
			Cached int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// Anthropic Messages.
type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}
type anMsg struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}
type anUsage struct {
	Input      int `json:"input_tokens"`
	CacheRead  int `json:"cache_read_input_tokens"`
	CacheWrite int `json:"cache_creation_input_tokens"`
	Output     int `json:"output_tokens"`
}
type anEvent struct {
	Type         string                  `json:"type"`
	Message      struct{ Usage anUsage } `json:"message"`
	ContentBlock anBlock                 `json:"content_block"`
	Delta        struct {
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
	} `json:"delta"`
	Usage *anUsage `json:"usage"`
}

type usage struct{ Input, CacheRead, CacheWrite, Output int }

var total usage

// conversations counts the conversations; each one's prompt is its own.
var conversations int

// turn sends one request and reads the stream: the text and calls.
func turn(body any, path string) []call {
	b, err := json.Marshal(body)
	check(err)
	resp, err := http.Post(*url+path, "application/json", bytes.NewReader(b))
	check(err)
	defer resp.Body.Close()
	var calls []call
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok || string(data) == "[DONE]" {
			continue
		}
		if *wire == "openai" {
			var c oaChunk
			check(json.Unmarshal(data, &c))
			if u := c.Usage; u != nil {
				total.Input += u.Prompt - u.Details.Cached
				total.CacheRead += u.Details.Cached
				total.Output += u.Output
			}
			for _, ch := range c.Choices {
				for _, tc := range ch.Delta.ToolCalls {
					if tc.ID != "" {
						calls = append(calls, call{ID: tc.ID, Name: tc.Function.Name})
					}
					calls[len(calls)-1].Args += tc.Function.Arguments
				}
			}
			continue
		}
		var e anEvent
		check(json.Unmarshal(data, &e))
		switch e.Type {
		case "message_start":
			u := e.Message.Usage
			total.Input += u.Input
			total.CacheRead += u.CacheRead
			total.CacheWrite += u.CacheWrite
		case "content_block_start":
			if e.ContentBlock.Type == "tool_use" {
				calls = append(calls, call{ID: e.ContentBlock.ID, Name: e.ContentBlock.Name})
			}
		case "content_block_delta":
			if e.Delta.PartialJSON != "" {
				calls[len(calls)-1].Args += e.Delta.PartialJSON
			}
		case "message_delta":
			total.Output += e.Usage.Output
		}
	}
	check(sc.Err())
	return calls
}

// run reads a call's file.
func run(c call) string {
	var in struct{ Path string }
	if json.Unmarshal([]byte(c.Args), &in) != nil || c.Name != "read" {
		return "error: bad call"
	}
	b, err := os.ReadFile(filepath.Join(*dir, "workspace", filepath.Clean("/"+in.Path)))
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// conversation runs one conversation and returns its model turns.
func conversation(system string, tools json.RawMessage) int {
	conversations++
	prompt := fmt.Sprintf("Conversation %d.%d: read file.txt again and again.", os.Getpid(), conversations)
	oa := []oaMsg{{Role: "system", Content: system}, {Role: "user", Content: prompt}}
	an := []anMsg{{Role: "user", Content: []anBlock{{Type: "text", Text: prompt}}}}
	for n := 1; ; n++ {
		var calls []call
		if *wire == "openai" {
			calls = turn(struct {
				Model    string          `json:"model"`
				Stream   bool            `json:"stream"`
				Options  map[string]bool `json:"stream_options"`
				Max      int             `json:"max_completion_tokens"`
				Tools    json.RawMessage `json:"tools"`
				Messages []oaMsg         `json:"messages"`
			}{"gpt-bench", true, map[string]bool{"include_usage": true}, 8192, tools, oa}, "/v1/chat/completions")
		} else {
			calls = turn(struct {
				Model    string          `json:"model"`
				Max      int             `json:"max_tokens"`
				System   string          `json:"system"`
				Tools    json.RawMessage `json:"tools"`
				Stream   bool            `json:"stream"`
				Messages []anMsg         `json:"messages"`
			}{"claude-bench", 8192, system, tools, true, an}, "/v1/messages")
		}
		if len(calls) == 0 {
			return n
		}
		am := oaMsg{Role: "assistant"}
		var uses, results []anBlock
		for _, c := range calls {
			tc := oaCall{ID: c.ID, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = c.Name, c.Args
			am.ToolCalls = append(am.ToolCalls, tc)
			uses = append(uses, anBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: json.RawMessage(c.Args)})
		}
		oa = append(oa, am)
		for _, c := range calls {
			out := run(c)
			oa = append(oa, oaMsg{Role: "tool", ToolCallID: c.ID, Content: out})
			results = append(results, anBlock{Type: "tool_result", ToolUseID: c.ID, Content: out})
		}
		an = append(an, anMsg{Role: "assistant", Content: uses}, anMsg{Role: "user", Content: results})
	}
}

func main() {
	flag.Parse()
	system, err := os.ReadFile(filepath.Join(*dir, "system.txt"))
	check(err)
	tools, err := os.ReadFile(filepath.Join(*dir, "tools-"+*wire+".json"))
	check(err)
	conversation(string(system), tools) // warm up
	busy0 := server()
	var ru0 syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru0))
	start, n := time.Now(), 0
	total = usage{}
	for range *convs {
		n += conversation(string(system), tools)
	}
	wall := time.Since(start)
	var ru1 syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru1))
	cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
	check(json.NewEncoder(os.Stdout).Encode(map[string]any{"Wall": wall, "Server": server() - busy0, "CPU": cpu, "Turns": n, "Usage": total}))
}

// server is the replay server's busy time so far.
func server() time.Duration {
	resp, err := http.Get(*url + "/stats")
	check(err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var ns int64
	_, err = fmt.Sscan(strings.TrimSpace(string(b)), &ns)
	check(err)
	return time.Duration(ns)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

package main

func greeting(name string) string {
	return "Hello, " + name + "!"
}

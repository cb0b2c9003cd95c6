print("lunet")

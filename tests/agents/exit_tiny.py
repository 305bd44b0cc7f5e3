"""The tiny expert-iteration budget the tests share: Traffic Jam's 2-player game is 24
moves (12 a seat) and pays only at its end, so one iteration of 24 moves plays every
game once, in seconds."""

#: ``ExpertIteration`` keyword arguments
TINY = {"search": "gumbel:n=4,m=2", "num_envs": 16, "steps_per_iteration": 24,
        "batch_size": 64, "net": (32, 32)}

#: the same budget as ``trafficenvs train traffic_jam --algo exit`` arguments
TINY_TRAIN = ["train", "traffic_jam", "--algo", "exit", "--num-envs", "16",
              "--exit-steps", "24", "--search", "gumbel:n=4,m=2", "--net", "32,32",
              "--batch-size", "64", "--no-progress"]
